#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Digest
import Foundation
import JSON
import TestSupport
import Wire
import XCTest

/// Issue 24's "done when" against a real DPoP server: Glewlwyd 2.7.5, Debian's
/// `glewlwyd` package, started by `Tests/Interop/start-glewlwyd.sh` (which sets it
/// up through its admin API). The built agent logs in by every flow with `dpop:
/// true`, and each test checks at Glewlwyd what a 200 alone would not show:
/// the token's `cnf.jkt` is the RFC 7638 thumbprint of the key in the agent's
/// proofs (Glewlwyd's userinfo does not compare the two), `userinfo` takes what
/// `sign` returned and refuses the token as Bearer, a refresh keeps the key (also
/// after a restart: Glewlwyd refuses a refresh proven by another key), and with
/// mandatory nonces every step succeeds through the agent's one nonce retry.
/// Skipped, with the reason, where glewlwyd is not installed, or when
/// AUTH_AGENT_SKIP_INTEROP=1.
final class GlewlwydDPoPTests: XCTestCase {
    private static let shared = InteropServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private var server: InteropServer!
    private var directory: URL!

    override func setUpWithError() throws {
        (server, directory) = try Self.shared.setUp(Self.startServer, directoryPrefix: "auth-agent-glewlwyd-agent")
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        server = nil
    }

    // MARK: Every flow binds the token to the agent's key

    func testPasswordLoginBindsTheTokenToTheAgentsKey() throws {
        let agent = try spawn([provider("password")])
        let login = try logIn(agent, flow: "password")
        XCTAssertEqual(login["user"]?["sub"]?.stringValue?.isEmpty, false, "userinfo answered the proven request: \(login)")
        try checkBinding(agent, flow: "password")
    }

    /// A client's own token: Glewlwyd's userinfo has no user for it, so only the binding and the refresh are checked.
    func testClientCredentialsBindsTheTokenToTheAgentsKey() throws {
        let agent = try spawn([provider("clientCredentials")])
        try logIn(agent, flow: "clientCredentials")
        let (token, jkt) = try boundToken(agent)
        XCTAssertEqual(token["tokenType"], "DPoP")
        XCTAssertEqual(jkt, try thumbprint(ofProofFrom: agent, for: userinfoEndpoint), "cnf.jkt is the agent's key")
    }

    func testAuthorizationCodeLoginBindsTheTokenToTheAgentsKey() throws {
        let agent = try spawn([provider("authorizationCode")])
        try logIn(agent, flow: "authorizationCode")
        try checkBinding(agent, flow: "authorizationCode")
    }

    func testDeviceLoginBindsTheTokenToTheAgentsKey() throws {
        let agent = try spawn([provider("deviceCode")])
        try logIn(agent, flow: "deviceCode")
        try checkBinding(agent, flow: "deviceCode")
    }

    // MARK: Refresh keeps the key

    func testARefreshKeepsTheKeyAlsoAfterARestart() throws {
        let first = try spawn([provider("password")])
        try logIn(first, flow: "password")
        let (login, jkt) = try boundToken(first)
        XCTAssertEqual(try first.result("refresh", ["provider": "glewlwyd"])["refreshed"], true)
        let (refreshed, jktAfterRefresh) = try boundToken(first)
        XCTAssertNotEqual(refreshed["accessToken"], login["accessToken"], "a new access token")
        XCTAssertEqual(jktAfterRefresh, jkt, "bound to the same key")
        first.agent.closeInput()
        XCTAssertEqual(first.agent.waitForExit(timeout: 5), 0, "the first agent has ended")

        // A new agent process on the same store: the key comes from the store, and
        // Glewlwyd accepts its proof for the refresh (it refuses one by another key).
        let restarted = try spawn([provider("password")])
        XCTAssertEqual(try restarted.result("refresh", ["provider": "glewlwyd"])["refreshed"], true)
        let (_, jktAfterRestart) = try boundToken(restarted)
        XCTAssertEqual(jktAfterRestart, jkt, "bound to the same key after a restart")
        XCTAssertEqual(try thumbprint(ofProofFrom: restarted, for: userinfoEndpoint), jkt)
        XCTAssertEqual(try userinfoWithSign(restarted).status, 200)
    }

    // MARK: The command line

    /// The README's recipe with the real curl: `auth-agent header URL > h && curl -H @h URL`,
    /// and `auth-agent fetch URL`, on the store an agent logged in to.
    func testHeaderWithCurlAndFetchFromTheCommandLine() throws {
        guard let curl = CLIHarness.which("curl") else { throw XCTSkip("curl is not installed") }
        let config = try writeConfig([provider("password")])
        let agent = try AgentConversation(arguments: ["--config", config.path], environment: ["XDG_STATE_HOME": directory.path])
        try logIn(agent, flow: "password")
        let environment = ["AUTH_AGENT_CONFIG": config.path, "XDG_STATE_HOME": directory.path]

        let header = try CLIHarness.run(AgentProcess.binaryURL.path, ["header", userinfoEndpoint], environment: environment)
        XCTAssertEqual(header.status, 0, header.stderr)
        let lines = header.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, header.stdout)
        XCTAssertEqual(lines.first?.hasPrefix("Authorization: DPoP "), true)
        XCTAssertEqual(lines.last?.hasPrefix("DPoP: "), true)
        let file = directory.appendingPathComponent("h")
        try Data(header.stdout.utf8).write(to: file)
        let curled = try CLIHarness.run(curl, ["-s", "-o", "/dev/null", "-w", "%{http_code}", "-H", "@" + file.path, userinfoEndpoint])
        XCTAssertEqual(curled.stdout, "200", "Glewlwyd's userinfo takes what header printed: \(curled.stderr)")

        let fetched = try CLIHarness.run(AgentProcess.binaryURL.path, ["fetch", userinfoEndpoint], environment: environment)
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertTrue(fetched.stdout.contains("\"sub\""), fetched.stdout)
    }

    // MARK: The clock

    /// Glewlwyd dates "now" with `time()`, a coarse clock that still reads the previous
    /// second for a few milliseconds after each second begins, and (with the default
    /// `oauth-dpop-iat-gap-duration` of 0) refuses a proof whose `iat` is after it. A
    /// proof dated with the current second is refused in that window: `sign` right
    /// after a second begins, five times, must still be accepted.
    func testAProofMadeJustAfterASecondBeginsIsAccepted() throws {
        let agent = try spawn([provider("password")])
        try logIn(agent, flow: "password")
        for round in 0..<5 {
            let now = Date().timeIntervalSince1970
            usleep(useconds_t(max(0, (now.rounded(.down) + 1 - now - 0.002) * 1_000_000)))
            while Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 1) > 0.5 {}
            let answer = try userinfoWithSign(agent)
            XCTAssertEqual(answer.status, 200, "round \(round): \(answer.headers["www-authenticate"] ?? answer.body)")
        }
    }

    // MARK: A token Glewlwyd no longer takes

    /// The access token revoked at Glewlwyd behind the agent's back: `fetch` gets a 401
    /// that is not about the proof, refreshes (proving the key) and resends once.
    func testFetchRefreshesAfterTheServerRevokedTheToken() throws {
        let agent = try spawn([provider("password")])
        try logIn(agent, flow: "password")
        let (token, jkt) = try boundToken(agent)
        let access = try XCTUnwrap(token["accessToken"]?.stringValue)
        let revoked = try confidentialClientPost(endpoint("revocationEndpoint", "plain"), [("token", access), ("token_type_hint", "access_token")])
        XCTAssertEqual(revoked.status, 200, revoked.body)
        XCTAssertEqual(try introspect(access)["active"], false)

        let fetched = try agent.result("fetch", ["request": ["method": "GET", "url": .string(userinfoEndpoint)]])
        XCTAssertEqual(fetched["status"], 200, "\(fetched)")
        XCTAssertEqual(fetched["retried"], true, "refreshed and resent: \(fetched)")
        let (after, jktAfter) = try boundToken(agent)
        XCTAssertNotEqual(after["accessToken"], token["accessToken"])
        XCTAssertEqual(jktAfter, jkt)
    }

    // MARK: Logout

    /// RFC 7009 at Glewlwyd: the agent revokes the refresh token of a bound session (no
    /// proof is needed there); Glewlwyd's introspection, asked by the same confidential
    /// client, says it is no longer active. (Glewlwyd leaves the access token issued with
    /// it alive until it expires; bound to a key the logout deleted, it is useless.)
    func testLogoutRevokesTheBoundSession() throws {
        let agent = try spawn([provider("password")])
        try logIn(agent, flow: "password")
        let refreshToken = try storedRefreshToken()
        XCTAssertEqual(try introspect(refreshToken)["active"], true)
        let logout = try agent.result("logout", ["provider": "glewlwyd"])
        XCTAssertEqual(logout["revoked"], true, "\(logout)")
        XCTAssertEqual(try introspect(refreshToken)["active"], false, "Glewlwyd revoked the refresh token")
    }

    // MARK: Mandatory nonces

    /// The `oidc-nonce` instance wants a nonce in every proof. Each step below is taken
    /// by an agent process that has never heard one (nonces live in memory), so its
    /// first request is refused with `use_dpop_nonce`; the agent retries at most once,
    /// so each success is exactly one nonce retry.
    func testMandatoryNoncesCostOneRetryEach() throws {
        let plugin = "nonce"
        let first = try spawn([provider("password", plugin: plugin)])
        try logIn(first, flow: "password")
        let (_, jkt) = try boundToken(first)
        XCTAssertEqual(try thumbprint(ofProofFrom: first, for: endpoint("userinfoEndpoint", plugin)), jkt)

        let second = try spawn([provider("password", plugin: plugin)])
        XCTAssertEqual(try second.result("refresh", ["provider": "glewlwyd"])["refreshed"], true, "refresh through one use_dpop_nonce at /token")
        XCTAssertEqual(try boundToken(second).jkt, jkt)

        let third = try spawn([provider("password", plugin: plugin)])
        let fetched = try third.result("fetch", ["request": ["method": "GET", "url": .string(endpoint("userinfoEndpoint", plugin))]])
        XCTAssertEqual(fetched["status"], 200, "fetch through one use_dpop_nonce 401 at userinfo: \(fetched)")
        XCTAssertEqual(fetched["retried"], false, "a nonce retry is not a refresh: \(fetched)")
        // `sign` now puts the nonce the fetch learnt into its proof.
        XCTAssertEqual(try userinfoWithSign(third, plugin: plugin).status, 200)
    }

    /// Every flow's login at the `oidc-nonce` instance, each by a new agent process: the
    /// token request of each grant gets `use_dpop_nonce` first.
    func testEveryFlowLogsInThroughMandatoryNonces() throws {
        for flow in ["password", "clientCredentials", "authorizationCode", "deviceCode"] {
            let agent = try spawn([provider(flow, plugin: "nonce")], store: "store-" + flow)
            try logIn(agent, flow: flow)
            let (token, jkt) = try boundToken(agent)
            XCTAssertEqual(token["tokenType"], "DPoP", flow)
            XCTAssertEqual(jkt, try thumbprint(ofProofFrom: agent, for: endpoint("userinfoEndpoint", "nonce")), "\(flow): cnf.jkt is the agent's key")
            if flow != "clientCredentials" {
                let answer = try userinfoWithSign(agent, plugin: "nonce")
                XCTAssertEqual(answer.status, 200, "\(flow): \(answer.headers)")
            }
        }
    }

    // MARK: Checks

    /// The Done-when checks for a logged-in agent: `cnf.jkt` = the thumbprint of the key in
    /// `sign`'s proof, userinfo 200 to `sign`'s headers and 401 to the token as Bearer, and
    /// a refresh (with a proof) that keeps the key.
    private func checkBinding(_ agent: AgentConversation, flow: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let (token, jkt) = try boundToken(agent)
        XCTAssertEqual(token["tokenType"], "DPoP", "\(flow): \(token)", file: file, line: line)
        XCTAssertEqual(jkt, try thumbprint(ofProofFrom: agent, for: userinfoEndpoint), "\(flow): cnf.jkt is the agent's key", file: file, line: line)
        let proven = try userinfoWithSign(agent)
        XCTAssertEqual(proven.status, 200, "\(flow): userinfo takes what sign returned: \(proven.body)", file: file, line: line)
        let access = try XCTUnwrap(token["accessToken"]?.stringValue)
        let bearer = try Browser(timeout: 10).fetch("GET", try XCTUnwrap(URL(string: userinfoEndpoint)), form: nil, headers: [("Authorization", "Bearer " + access)])
        XCTAssertEqual(bearer.status, 401, "\(flow): the bound token is refused as Bearer", file: file, line: line)

        XCTAssertEqual(try agent.result("refresh", ["provider": "glewlwyd"])["refreshed"], true, "\(flow): refresh with a proof", file: file, line: line)
        let (refreshed, jktAfter) = try boundToken(agent)
        XCTAssertNotEqual(refreshed["accessToken"], token["accessToken"], "\(flow)", file: file, line: line)
        XCTAssertEqual(jktAfter, jkt, "\(flow): the refreshed token is bound to the same key", file: file, line: line)
        XCTAssertEqual(try userinfoWithSign(agent).status, 200, "\(flow): after the refresh", file: file, line: line)
        let fetched = try agent.result("fetch", ["request": ["method": "GET", "url": .string(userinfoEndpoint)]])
        XCTAssertEqual(fetched["status"], 200, "\(flow): fetch proves the key too: \(fetched)", file: file, line: line)
    }

    /// The RPC `token` answer and the `cnf.jkt` of its access token (a JWT at Glewlwyd).
    private func boundToken(_ agent: AgentConversation) throws -> (token: JSONValue, jkt: String) {
        let token = try agent.result("token", ["provider": "glewlwyd"])
        let access = try XCTUnwrap(token["accessToken"]?.stringValue, "\(token)")
        let claims = try Self.jwtPart(access, 1)
        return (token, try XCTUnwrap(claims["cnf"]?["jkt"]?.stringValue, "Glewlwyd bound the token: \(claims)"))
    }

    /// The RFC 7638 thumbprint of the public key in a proof `sign` returns, computed here from
    /// the `jwk` header (not by the agent's code): SHA-256 of the required members in order.
    private func thumbprint(ofProofFrom agent: AgentConversation, for url: String) throws -> String {
        let signed = try agent.result("sign", ["request": ["method": "GET", "url": .string(url)]])
        let proof = try XCTUnwrap(signed["headers"]?["DPoP"]?.stringValue, "\(signed)")
        let header = try Self.jwtPart(proof, 0)
        XCTAssertEqual(header["typ"], "dpop+jwt")
        XCTAssertEqual(header["alg"], "ES256")
        let jwk = try XCTUnwrap(header["jwk"])
        XCTAssertNil(jwk["d"], "the proof carries the public key only")
        let x = try XCTUnwrap(jwk["x"]?.stringValue), y = try XCTUnwrap(jwk["y"]?.stringValue)
        XCTAssertEqual(jwk["kty"], "EC")
        XCTAssertEqual(jwk["crv"], "P-256")
        return Base64URL.encode(SHA256.hash(#"{"crv":"P-256","kty":"EC","x":""# + x + #"","y":""# + y + #""}"#))
    }

    /// GET userinfo with exactly the headers `sign` returned for it.
    private func userinfoWithSign(_ agent: AgentConversation, plugin: String = "plain") throws -> Browser.Response {
        let url = endpoint("userinfoEndpoint", plugin)
        let signed = try agent.result("sign", ["request": ["method": "GET", "url": .string(url)]])
        let headers = try XCTUnwrap(signed["headers"]?.objectValue, "\(signed)")
        XCTAssertEqual(headers["Authorization"]?.stringValue?.hasPrefix("DPoP "), true, "\(signed)")
        return try Browser(timeout: 10).fetch("GET", try XCTUnwrap(URL(string: url)), form: nil,
                                              headers: headers.members.compactMap { name, value in value.stringValue.map { (name, $0) } })
    }

    /// The refresh token in the file store (the test's own store: the agent hands it to nobody).
    private func storedRefreshToken() throws -> String {
        let store = directory.appendingPathComponent("store")
        for name in try FileManager.default.contentsOfDirectory(atPath: store.path) where name.hasSuffix(".json") {
            let record = try? JSONParser.parse([UInt8](try Data(contentsOf: store.appendingPathComponent(name))))
            if let token = record?["session"]?["refreshToken"]?.stringValue { return token }
        }
        throw XCTSkip("no refresh token found in the file store at \(store.path)")
    }

    /// RFC 7662 introspection of `token`, authenticated as the confidential client.
    private func introspect(_ token: String) throws -> JSONValue {
        let answer = try confidentialClientPost(endpoint("introspectionEndpoint", "plain"), [("token", token)])
        XCTAssertEqual(answer.status, 200, answer.body)
        return try JSONParser.parse(Array(answer.body.utf8))
    }

    /// A form POST authenticated as the confidential client (HTTP Basic).
    private func confidentialClientPost(_ url: String, _ form: [(String, String)]) throws -> Browser.Response {
        let client = server.info["clients"]?["confidential"]
        let basic = Data("\(client?["clientId"]?.stringValue ?? ""):\(client?["clientSecret"]?.stringValue ?? "")".utf8).base64EncodedString()
        return try Browser(timeout: 10).fetch("POST", try XCTUnwrap(URL(string: url)), form: form, headers: [("Authorization", "Basic " + basic)])
    }

    private static func jwtPart(_ jwt: String, _ index: Int) throws -> JSONValue {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3, "a JWS")
        return try JSONParser.parse(try XCTUnwrap(Base64URL.decode(String(parts[index]))))
    }

    // MARK: Glewlwyd's pages, as their scripts use its API

    private func signInAndConsent(_ browser: Browser) throws {
        let api = server["apiUrl"]
        let credentials = JSONSerializer.string(["username": .string(server["username"]), "password": .string(server["password"])])
        let signIn = try browser.fetch("POST", try XCTUnwrap(URL(string: api + "/auth/")), json: credentials)
        XCTAssertEqual(signIn.status, 200, "sign in: \(signIn.body)")
        let client = server.info["clients"]?["public"]?["clientId"]?.stringValue ?? ""
        let consent = try browser.fetch("PUT", try XCTUnwrap(URL(string: api + "/auth/grant/" + client)), json: #"{"scope":"openid"}"#)
        XCTAssertEqual(consent.status, 200, "consent: \(consent.body)")
    }

    // MARK: Agents and providers

    private var userinfoEndpoint: String { endpoint("userinfoEndpoint", "plain") }

    private func endpoint(_ name: String, _ plugin: String) -> String {
        server.info["plugins"]?[plugin]?[name]?.stringValue ?? ""
    }

    /// The provider `glewlwyd` for `flow` at the plugin instance `plugin` (`plain`, or
    /// `nonce` with mandatory nonces). Glewlwyd refuses the password grant from a public
    /// client, so password and client credentials use the confidential client.
    private func provider(_ flow: String, plugin: String = "plain") -> JSONValue {
        var p: JSONObject = ["id": "glewlwyd", "displayName": "Glewlwyd", "flow": .string(flow), "dpop": true,
                             "origins": [.string(server["baseUrl"])], "scopes": ["openid"],
                             "tokenEndpoint": .string(endpoint("tokenEndpoint", plugin)),
                             "userinfoEndpoint": .string(endpoint("userinfoEndpoint", plugin)),
                             "revocationEndpoint": .string(endpoint("revocationEndpoint", plugin))]
        switch flow {
        case "password", "clientCredentials":
            p["clientId"] = server.info["clients"]?["confidential"]?["clientId"]
            p["clientSecret"] = server.info["clients"]?["confidential"]?["clientSecret"]
        case "authorizationCode":
            p["clientId"] = server.info["clients"]?["public"]?["clientId"]
            p["authorizationEndpoint"] = .string(endpoint("authorizationEndpoint", plugin))
            p["redirectPort"] = server.info["redirectPort"]
            p["openBrowser"] = false
        default:
            p["clientId"] = server.info["clients"]?["public"]?["clientId"]
            p["deviceAuthorizationEndpoint"] = .string(endpoint("deviceAuthorizationEndpoint", plugin))
            p["openBrowser"] = false
        }
        if flow == "clientCredentials" { p["userinfoEndpoint"] = nil }
        return .object(p)
    }

    /// Logs the agent's provider in by `flow`, playing the person where the flow needs one.
    /// Glewlwyd's login page is a script calling its JSON API, so the test does what the
    /// script does: POST /api/auth/ (sign in), PUT /api/auth/grant/CLIENT (consent), then
    /// back to where the server came from with `g_continue`.
    @discardableResult
    private func logIn(_ agent: AgentConversation, flow: String, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        switch flow {
        case "password":
            return try agent.result("login", ["provider": "glewlwyd",
                                              "credentials": ["username": .string(server["username"]), "password": .string(server["password"])]])
        case "clientCredentials":
            return try agent.result("login", ["provider": "glewlwyd"])
        default:
            break
        }
        let loginID = try agent.send("login", ["provider": "glewlwyd"])
        let prompt = try expectPrompt(agent, loginID)
        let browser = Browser(timeout: 10)
        if flow == "authorizationCode" {
            let url = try XCTUnwrap(prompt["url"]?.stringValue, "\(prompt)")
            let toLogin = try browser.navigate(url, stopAt: { $0.path.hasSuffix("/login.html") })
            let loginPage = try XCTUnwrap(toLogin.location.flatMap { URLComponents(string: $0) },
                                          "Glewlwyd sends the browser to its login page: \(browser.trail)", file: file, line: line)
            let callback = try XCTUnwrap(loginPage.queryItems?.first { $0.name == "callback_url" }?.value, "\(loginPage)")
            try signInAndConsent(browser)
            let last = try browser.navigate(callback + "&g_continue")
            XCTAssertEqual(last.url.port, server.info["redirectPort"]?.intValue.map(Int.init),
                           "the browser ends at the agent's callback: \(browser.trail)", file: file, line: line)
        } else {
            let userCode = try XCTUnwrap(prompt["userCode"]?.stringValue, "\(prompt)")
            let verification = try XCTUnwrap(prompt["verificationUri"]?.stringValue, "\(prompt)")
            try signInAndConsent(browser)
            let done = try browser.fetch("GET", try XCTUnwrap(URL(string: "\(verification)?code=\(userCode)&g_continue")), form: nil)
            XCTAssertTrue(done.location?.contains("prompt=deviceComplete") ?? false,
                          "Glewlwyd approved the device: \(done.status) \(done.location ?? "")", file: file, line: line)
        }
        let answer = try agent.answer(to: loginID, timeout: 20)
        return try XCTUnwrap(answer["result"], "\(flow) login: \(answer)", file: file, line: line)
    }

    private func expectPrompt(_ agent: AgentConversation, _ loginID: JSONValue) throws -> JSONValue {
        let message = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 15)
        guard message["method"] != nil else {
            throw AgentConversation.Failure(description: "login was answered before any loginPrompt: \(message)")
        }
        return message["params"] ?? .null
    }

    private func spawn(_ providers: [JSONValue], store: String = "store") throws -> AgentConversation {
        try AgentConversation(arguments: ["--config", try writeConfig(providers, store: store).path], environment: ["XDG_STATE_HOME": directory.path])
    }

    private func writeConfig(_ providers: [JSONValue], store: String = "store") throws -> URL {
        let config: JSONValue = ["store": ["kind": "file", "path": .string(directory.appendingPathComponent(store).path)],
                                 "providers": .array(providers)]
        let path = directory.appendingPathComponent("config-\(UUID().uuidString).json")
        try Data(JSONSerializer.bytes(config)).write(to: path, options: .atomic)
        return path
    }

    /// The class's one Glewlwyd (`shared`), set up by `start-glewlwyd.sh`.
    static func startServer() throws -> InteropServer {
        try InteropServer.start(
            script: InteropServer.script.deletingLastPathComponent().appendingPathComponent("start-glewlwyd.sh"),
            skips: [3: "Glewlwyd is not installed here (on Debian: apt-get install glewlwyd)"],
            environment: ["GLEWLWYD_REDIRECT_PORT": String(try freePort()), "INTEROP_PARENT_PID": String(getpid())],
            installTimeout: 20, readyTimeout: 10)
    }

    /// A loopback port free right now, for the one redirect URI Glewlwyd will accept
    /// (it matches redirect URIs exactly, port included).
    private static func freePort() throws -> UInt16 {
        let (fd, port) = try LoopbackSocket.makeListener(port: 0)
        LoopbackSocket.closeDescriptor(fd)
        return port
    }
}
