#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSON
import TestSupport
import Wire
import XCTest

/// Issue 32's "done when" against a real server: Glewlwyd 2.7.5 (Debian's `glewlwyd`), set up
/// by `Tests/Interop/start-glewlwyd.sh`. Its `oidc-par` instance requires pushed authorization
/// requests (RFC 9126) and takes signed client authentication (RFC 7523 §2.2); its client
/// `agent-jwt` may authenticate only with `private_key_jwt`, its public key (an RSA key the
/// script made, 0600) registered as the client's `pubkey`. The built agent logs in through PAR
/// and with `private_key_jwt`, and each test shows Glewlwyd refusing the same client without
/// them. No test output may show the client's key or secret. Skipped, with the reason, where
/// glewlwyd is not installed, or when AUTH_AGENT_SKIP_INTEROP=1.
final class GlewlwydPARTests: XCTestCase {
    private static let shared = InteropServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private var server: InteropServer!
    private var directory: URL!
    /// Every answer and notification the agents gave, and their stderr, for the secrets check.
    private var output = ""

    override func setUpWithError() throws {
        (server, directory) = try Self.shared.setUp(Self.startServer, directoryPrefix: "auth-agent-glewlwyd-par")
        output = ""
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        server = nil
    }

    // MARK: PAR

    /// Glewlwyd's `oidc-par` discovery says `require_pushed_authorization_requests: true`: the agent,
    /// configured by issuer alone, pushes the request and opens a URL with `client_id` and
    /// `request_uri` only; the same public client's plain authorization request gets 403.
    func testAPARRequiredLoginSucceedsWhereThePlainRequestIsRefused() throws {
        let plain = AuthorizationCodeURL.plain(endpoint: endpoint("authorizationEndpoint"), clientId: "agent-public",
                                               redirectPort: server.info["redirectPort"]?.intValue ?? 0)
        XCTAssertEqual(try Browser(timeout: 10).fetch("GET", try XCTUnwrap(URL(string: plain)), form: nil).status, 403,
                       "Glewlwyd refuses an authorization request that was not pushed")

        let agent = try spawn(["id": "glewlwyd", "flow": "authorizationCode", "origins": [.string(server["baseUrl"])],
                               "issuer": .string(endpoint("issuer")), "clientId": "agent-public", "scopes": ["openid"],
                               "redirectPort": server.info["redirectPort"] ?? .null])
        let (login, url) = try logInByBrowser(agent, client: "agent-public")
        XCTAssertEqual(login["user"]?["sub"]?.stringValue?.isEmpty, false, "\(login)")
        let query = try XCTUnwrap(URLComponents(string: url)?.queryItems)
        XCTAssertEqual(query.map(\.name).sorted(), ["client_id", "request_uri"], "the browser carries the pushed request only: \(url)")
        XCTAssertEqual(query.first { $0.name == "request_uri" }?.value?.hasPrefix("urn:ietf:params:oauth:request_uri:"), true)
        let token = try agent.result("token", ["provider": "glewlwyd"])
        XCTAssertEqual(try userinfo(token).status, 200, "the token PAR's login brought works at userinfo")
    }

    /// PAR with DPoP: the pushed request carries `dpop_jkt` (RFC 9449 §10) and the code grant proves that key;
    /// Glewlwyd binds the token to it (`cnf.jkt`).
    func testAPushedLoginWithDPoPBindsTheTokenToTheAgentsKey() throws {
        let agent = try spawn(["id": "glewlwyd", "flow": "authorizationCode", "origins": [.string(server["baseUrl"])], "dpop": true,
                               "issuer": .string(endpoint("issuer")), "clientId": "agent-public", "scopes": ["openid"],
                               "redirectPort": server.info["redirectPort"] ?? .null], store: "dpop")
        let (login, _) = try logInByBrowser(agent, client: "agent-public")
        XCTAssertNotNil(login["user"], "\(login)")
        let token = try agent.result("token", ["provider": "glewlwyd"])
        XCTAssertEqual(token["tokenType"], "DPoP")
        let access = try XCTUnwrap(token["accessToken"]?.stringValue)
        let claims = try JSONParser.parse(try XCTUnwrap(Base64URL.decode(String(access.split(separator: ".")[1]))))
        XCTAssertNotNil(claims["cnf"]?["jkt"]?.stringValue, "bound: \(claims)")
        let signed = try agent.result("sign", ["request": ["method": "GET", "url": .string(endpoint("userinfoEndpoint"))]])
        let headers = try XCTUnwrap(signed["headers"]?.objectValue)
        let answer = try Browser(timeout: 10).fetch("GET", try XCTUnwrap(URL(string: endpoint("userinfoEndpoint"))), form: nil,
                                                    headers: headers.members.compactMap { name, value in value.stringValue.map { (name, $0) } })
        XCTAssertEqual(answer.status, 200, "userinfo takes sign's DPoP headers")
    }

    // MARK: private_key_jwt

    /// `agent-jwt` lists only `private_key_jwt`: the agent's assertions (RS256 for client credentials,
    /// PS256 for the password grant, its refresh and the revocation at logout) are taken, and the same
    /// client sending its secret with HTTP Basic is refused.
    func testPrivateKeyJWTLoginsSucceedWhereTheSecretIsRefused() throws {
        let basic = try client(secret: true, flow: "clientCredentials")
        let refused = try spawn(basic).call("login", ["provider": "glewlwyd"])
        record(refused)
        XCTAssertEqual(refused["error"]?["data"]?["reason"], "invalidCredentials", "Glewlwyd refuses the client's Basic authentication: \(refused)")

        let service = try spawn(try client(alg: "RS256", flow: "clientCredentials"))
        let login = try record(service.result("login", ["provider": "glewlwyd"]))
        XCTAssertEqual(login["account"], "agent-jwt", "\(login)")
        XCTAssertEqual(try service.result("token", ["provider": "glewlwyd"])["accessToken"]?.stringValue?.split(separator: ".").count, 3,
                       "Glewlwyd issued the client its JWT access token")

        let person = try spawn(try client(alg: "PS256", flow: "password"), store: "password")
        let passwordLogin = try record(person.result("login", ["provider": "glewlwyd",
                                                              "credentials": ["username": .string(server["username"]), "password": .string(server["password"])]]))
        XCTAssertEqual(passwordLogin["user"]?["sub"]?.stringValue?.isEmpty, false, "\(passwordLogin)")
        XCTAssertEqual(try record(person.result("refresh", ["provider": "glewlwyd"]))["refreshed"], true, "a refresh authenticated by an assertion")
        XCTAssertEqual(try userinfoStatus(person), 200)
        XCTAssertEqual(try record(person.result("logout", ["provider": "glewlwyd"]))["revoked"], true, "the revocation authenticated by an assertion")
        try checkNoSecrets([service, person])
    }

    /// The browser login of the `private_key_jwt` client at the PAR-required instance: the push and
    /// the code exchange each carry an assertion whose `aud` is that endpoint.
    func testAPushedLoginOfAPrivateKeyJWTClient() throws {
        var config = try client(alg: "RS256", flow: "authorizationCode")
        config["redirectPort"] = server.info["redirectPort"]
        let agent = try spawn(config)
        let (login, url) = try logInByBrowser(agent, client: "agent-jwt")
        XCTAssertEqual(login["user"]?["sub"]?.stringValue?.isEmpty, false, "\(login)")
        XCTAssertNotNil(URLComponents(string: url)?.queryItems?.first { $0.name == "request_uri" }, url)
        XCTAssertEqual(try userinfoStatus(agent), 200)
        try checkNoSecrets([agent])
    }

    /// The issue's own recipe: `config add … --generate-key` makes the agent's key and prints its public JWK,
    /// which goes into a new client's JWKS at Glewlwyd (through its admin API, as an administrator
    /// registers a client); the agent then authenticates with ES256 assertions whose `kid` names it.
    func testAGeneratedKeyRegisteredInTheClientsJWKSLogsIn() throws {
        let config = directory.appendingPathComponent("config/config.json").path
        let added = try CLIHarness.run(AgentProcess.binaryURL.path, ["--config", config, "config", "add", "glewlwyd", "--issuer", endpoint("issuer"),
                                                                     "--client-id", "agent-jwks", "--origin", server["baseUrl"],
                                                                     "--flow", "clientCredentials", "--scope", "openid", "--generate-key"],
                                       environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/auth-agent-test-bus"])
        XCTAssertEqual(added.status, 0, added.stderr)
        let jwk = try JSONParser.parse(Array(added.stdout.utf8))
        XCTAssertNotNil(jwk["kid"]?.stringValue, added.stdout)

        let admin = Browser(timeout: 10)
        let api = server["apiUrl"]
        XCTAssertEqual(try admin.fetch("POST", try XCTUnwrap(URL(string: api + "/auth/")), json: #"{"username":"admin","password":"password"}"#).status, 200)
        let client: JSONValue = ["client_id": "agent-jwks", "client_name": "auth-agent (generated key)", "confidential": true, "enabled": true,
                                 "token_endpoint_auth_method": ["private_key_jwt"], "authorization_type": ["client_credentials"],
                                 "redirect_uri": [], "scope": ["openid"], "jwks": ["keys": [jwk]]]
        let registered = try admin.fetch("POST", try XCTUnwrap(URL(string: api + "/client/")), json: JSONSerializer.string(client))
        XCTAssertEqual(registered.status, 200, registered.body)

        let agent = try AgentConversation(arguments: ["--config", config, "--log-level", "debug"], environment: ["XDG_STATE_HOME": directory.path])
        let login = try record(agent.result("login", ["provider": "glewlwyd"]))
        XCTAssertEqual(login["account"], "agent-jwks", "\(login)")
        let key = try String(contentsOfFile: directory.appendingPathComponent("config/glewlwyd.client-key.pem").path, encoding: .utf8)
        let all = output + agent.agent.stderr + added.stdout + added.stderr
        for line in key.split(separator: "\n") where !line.hasPrefix("-----") { XCTAssertFalse(all.contains(line), "no line of the private key shows") }
    }

    // MARK: Helpers

    private func endpoint(_ name: String) -> String { server.info["plugins"]?["par"]?[name]?.stringValue ?? "" }

    /// The `agent-jwt` provider for `flow`: signing with its key file (`alg`), or with `secret` its secret by HTTP Basic.
    private func client(alg: String = "RS256", secret: Bool = false, flow: String) throws -> JSONObject {
        let jwt = server.info["clients"]?["jwt"]
        var p: JSONObject = ["id": "glewlwyd", "displayName": "Glewlwyd", "flow": .string(flow), "origins": [.string(server["baseUrl"])],
                             "issuer": .string(endpoint("issuer")), "clientId": jwt?["clientId"] ?? .null, "scopes": ["openid"],
                             "revocationEndpoint": .string(endpoint("revocationEndpoint"))]
        if secret {
            p["clientSecret"] = jwt?["clientSecret"]
        } else {
            p["clientAuth"] = ["method": "private_key_jwt", "key": jwt?["keyFile"] ?? .null, "alg": .string(alg)]
        }
        return p
    }

    /// The secrets check: neither the client's secret nor any line of its private key's PEM in what
    /// the agents wrote (answers, notifications, stderr at `--log-level debug`).
    private func checkNoSecrets(_ agents: [AgentConversation], file: StaticString = #filePath, line: UInt = #line) throws {
        let jwt = server.info["clients"]?["jwt"]
        let pem = try String(contentsOfFile: try XCTUnwrap(jwt?["keyFile"]?.stringValue), encoding: .utf8)
        let all = output + agents.map(\.agent.stderr).joined(separator: "\n")
        XCTAssertFalse(all.isEmpty)
        XCTAssertFalse(all.contains(try XCTUnwrap(jwt?["clientSecret"]?.stringValue)), "the client secret never shows", file: file, line: line)
        for keyLine in pem.split(separator: "\n") where !keyLine.hasPrefix("-----") {
            XCTAssertFalse(all.contains(keyLine), "no line of the private key shows", file: file, line: line)
        }
    }

    @discardableResult
    private func record(_ value: JSONValue) -> JSONValue {
        output += JSONSerializer.string(value) + "\n"
        return value
    }

    private func userinfoStatus(_ agent: AgentConversation) throws -> Int {
        try userinfo(try agent.result("token", ["provider": "glewlwyd"])).status
    }

    private func userinfo(_ token: JSONValue) throws -> Browser.Response {
        let access = try XCTUnwrap(token["accessToken"]?.stringValue, "\(token)")
        return try Browser(timeout: 10).fetch("GET", try XCTUnwrap(URL(string: endpoint("userinfoEndpoint"))), form: nil,
                                              headers: [("Authorization", "Bearer " + access)])
    }

    /// A browser login as Glewlwyd's pages do it (sign in, consent for `client`, continue); the login's answer and the URL it showed.
    private func logInByBrowser(_ agent: AgentConversation, client: String) throws -> (JSONValue, String) {
        let loginID = try agent.send("login", ["provider": "glewlwyd"])
        let message = try record(agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 15))
        let url = try XCTUnwrap(message["params"]?["url"]?.stringValue, "a browser prompt: \(message)")
        let browser = Browser(timeout: 10)
        let toLogin = try browser.navigate(url, stopAt: { $0.path.hasSuffix("/login.html") })
        let loginPage = try XCTUnwrap(toLogin.location.flatMap { URLComponents(string: $0) }, "Glewlwyd sends the browser to its login page: \(browser.trail)")
        let callback = try XCTUnwrap(loginPage.queryItems?.first { $0.name == "callback_url" }?.value, "\(loginPage)")
        let api = server["apiUrl"]
        let credentials = JSONSerializer.string(["username": .string(server["username"]), "password": .string(server["password"])])
        XCTAssertEqual(try browser.fetch("POST", try XCTUnwrap(URL(string: api + "/auth/")), json: credentials).status, 200)
        XCTAssertEqual(try browser.fetch("PUT", try XCTUnwrap(URL(string: api + "/auth/grant/" + client)), json: #"{"scope":"openid"}"#).status, 200)
        _ = try browser.navigate(callback + "&g_continue")
        let answer = try record(agent.answer(to: loginID, timeout: 20))
        return (try XCTUnwrap(answer["result"], "login: \(answer)"), url)
    }

    private func spawn(_ provider: JSONObject, store: String = "store") throws -> AgentConversation {
        let config: JSONValue = ["store": ["kind": "file", "path": .string(directory.appendingPathComponent(store).path)],
                                 "providers": [.object(provider)]]
        let path = directory.appendingPathComponent("config-\(UUID().uuidString).json")
        try Data(JSONSerializer.bytes(config)).write(to: path, options: .atomic)
        return try AgentConversation(arguments: ["--config", path.path, "--log-level", "debug"], environment: ["XDG_STATE_HOME": directory.path])
    }

    private static func startServer() throws -> InteropServer {
        let (fd, port) = try LoopbackSocket.makeListener(port: 0)
        LoopbackSocket.closeDescriptor(fd)
        return try InteropServer.start(
            script: InteropServer.script.deletingLastPathComponent().appendingPathComponent("start-glewlwyd.sh"),
            skips: [3: "Glewlwyd is not installed here (on Debian: apt-get install glewlwyd)"],
            environment: ["GLEWLWYD_REDIRECT_PORT": String(port), "INTEROP_PARENT_PID": String(getpid())],
            installTimeout: 20, readyTimeout: 10)
    }
}

/// An authorization request in the URL, as a client that does not push sends it.
private enum AuthorizationCodeURL {
    static func plain(endpoint: String, clientId: String, redirectPort: Int64) -> String {
        var c = URLComponents(string: endpoint)
        c?.queryItems = [URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: clientId),
                         URLQueryItem(name: "redirect_uri", value: "http://127.0.0.1:\(redirectPort)/callback"),
                         URLQueryItem(name: "scope", value: "openid"), URLQueryItem(name: "state", value: "plain-request"),
                         URLQueryItem(name: "code_challenge", value: String(repeating: "a", count: 43)),
                         URLQueryItem(name: "code_challenge_method", value: "S256")]
        return c?.string ?? endpoint
    }
}
