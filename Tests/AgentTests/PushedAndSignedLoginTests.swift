import DevIssuer
import Foundation
import JSON
import AuthCore
import TestSupport
import XCTest

/// Issue 32 items 1–3 against the dev issuer, with the built agent: PAR by a provider's `par`, by
/// the server's metadata and per client at the server (`cli-par`), a `request_uri` that expires
/// while the login waits, a refused push in the server's words; `client_secret_jwt`; and a FAPI 2.0
/// provider made by `config add --profile fapi2 --generate-key`, logging in, then each refusal seen
/// (the agent's and the server's). No output shows the client's key or secret.
final class PushedAndSignedLoginTests: XCTestCase {
    private var issuer: DevIssuer!
    private var directory: URL!
    /// What the agents answered, for the secrets check (their stderr is added there).
    private var output = ""

    override func setUpWithError() throws {
        issuer = DevIssuer(options: .init(deviceInterval: 0))
        _ = try issuer.start(port: 0)
        issuer.setAutoApprove(username: "alice")
        directory = try TemporaryDirectory(prefix: "auth-agent-par").url
        output = ""
    }

    override func tearDown() {
        issuer.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    // MARK: PAR

    func testAClientTheServerMakesPushIsRefusedUntilTheProviderPushes() throws {
        let plain = try agent(["flow": "authorizationCode", "clientId": "cli-par"])
        let refused = try browserLogin(plain)
        XCTAssertEqual(refused["error"]?["data"]?["reason"], "loginDenied", "\(refused)")
        XCTAssertEqual(refused["error"]?["data"]?["serverDescription"], "Pushed Authorization Request must be used")

        let pushing = try agent(["flow": "authorizationCode", "clientId": "cli-par", "par": true])
        let (answer, urls) = try browserLoginWithURLs(pushing)
        XCTAssertEqual(answer["result"]?["user"]?["sub"], "alice", "\(answer)")
        XCTAssertEqual(try names(urls[0]), ["client_id", "request_uri"], "the browser carries only the pushed request's reference")
        XCTAssertEqual(issuer.count("par"), 1)
    }

    func testTheServersRequirementMakesAnyProviderPush() throws {
        issuer.injectDiscoveryFault(.requirePAR)
        let (answer, urls) = try browserLoginWithURLs(try agent(["flow": "authorizationCode", "clientId": "cli"]))
        XCTAssertNotNil(answer["result"], "\(answer)")
        XCTAssertEqual(try names(urls[0]), ["client_id", "request_uri"])
    }

    /// The `request_uri` lives 1 s here: a login still waiting then pushes again and shows the new URL,
    /// which completes the login.
    func testARequestURIThatExpiresWhileTheLoginWaitsIsPushedAgain() throws {
        issuer.setPARLifetime(1)
        let agent = try agent(["flow": "authorizationCode", "clientId": "cli", "par": true])
        let login = try agent.send("login", ["provider": "p"])
        let first = try url(of: try agent.notification("loginPrompt"))
        let second = try url(of: try agent.notification("loginPrompt", timeout: 10))
        XCTAssertNotEqual(first, second, "a new request_uri")
        XCTAssertGreaterThanOrEqual(issuer.count("par"), 2)
        _ = try Browser(timeout: 10).navigate(second)
        XCTAssertNotNil(try record(agent.answer(to: login))["result"])
    }

    func testARefusedPushIsReportedInTheServersWords() throws {
        let answer = try agent(["flow": "authorizationCode", "clientId": "nobody", "par": true]).call("login", ["provider": "p"])
        // A client the server does not know is a configuration mistake: 1016, the key to fix named.
        XCTAssertEqual(answer["error"]?["code"], 1016, "\(answer)")
        let message: JSONValue = .string("P refused the pushed authorization request (invalid_client: unknown client). "
            + "The server does not know this client or its authentication: check \"clientId\" in the configuration.")
        XCTAssertEqual(answer["error"]?["message"], message)
        XCTAssertEqual(answer["error"]?["data"]?["configKey"], "clientId")
        XCTAssertEqual(answer["error"]?["data"]?["serverDescription"], "unknown client")
    }

    // MARK: client_secret_jwt

    func testClientSecretJWT() throws {
        let signed = try agent(["flow": "clientCredentials", "scopes": ["read"], "clientId": "svc", "clientSecret": "svc-secret", "clientAuth": ["method": "client_secret_jwt"]])
        XCTAssertEqual(try record(signed.result("login", ["provider": "p"]))["account"], "svc")
        let wrong = try agent(["flow": "clientCredentials", "scopes": ["read"], "clientId": "svc", "clientSecret": "not-the-secret", "clientAuth": ["method": "client_secret_jwt"]])
        let refused = try record(wrong.call("login", ["provider": "p"]))
        XCTAssertEqual(refused["error"]?["data"]?["serverDescription"], "client_secret_jwt: the signature does not verify with the client's secret")
        try checkNoSecrets([signed, wrong], secrets: ["svc-secret", "not-the-secret"])
    }

    /// The device authorization endpoint and the device code grant take the assertion too (RFC 7523 §2.2 at
    /// every endpoint): the issuer holds this client to FAPI 2.0's client authentication, so anything but
    /// `private_key_jwt` would be refused there.
    func testADeviceLoginAuthenticatesItsClientWithAnAssertion() throws {
        let key = directory.appendingPathComponent("device.pem").path
        guard case .success(let made) = ClientKeyFile.generate(at: key) else { return XCTFail("no key") }
        issuer.setClient("device-bank", secret: .some(nil), jwk: try XCTUnwrap(JSONParser.parse(Array(made.jwk.utf8)).objectValue), fapi2: true)
        let agent = try agent(["flow": "deviceCode", "clientId": "device-bank", "dpop": true, "clientAuth": ["method": "private_key_jwt", "key": .string(key)]])
        let login = try agent.send("login", ["provider": "p"])
        let prompt = try record(agent.notificationOrAnswer("loginPrompt", to: login))
        XCTAssertTrue(issuer.approveDevice(userCode: try XCTUnwrap(prompt["params"]?["userCode"]?.stringValue, "\(prompt)"), username: "alice"))
        XCTAssertEqual(try record(agent.answer(to: login))["result"]?["user"]?["sub"], "alice")
        XCTAssertEqual(issuer.count("deviceAuthorization"), 1)
    }

    // MARK: FAPI 2.0

    /// `config add --profile fapi2 --generate-key` writes a provider held to FAPI 2.0 and prints the
    /// key's public JWK; registered at the issuer for a FAPI client, the browser login pushes its
    /// request, signs its client authentication with the issuer as audience, and gets a DPoP token.
    func testAFAPI2ProviderFromConfigAddLogsIn() throws {
        let (config, jwk) = try fapiProvider()
        issuer.setClient("bank", secret: .some(nil), jwk: jwk, fapi2: true)
        let bank = try AgentConversation(arguments: ["--config", config, "--log-level", "debug"], environment: ["XDG_STATE_HOME": directory.path])
        let (answer, urls) = try browserLoginWithURLs(bank, provider: "bank")
        XCTAssertEqual(answer["result"]?["user"]?["sub"], "alice", "\(answer)")
        XCTAssertEqual(try names(urls[0]), ["client_id", "request_uri"])
        XCTAssertEqual(try record(bank.result("token", ["provider": "bank"]))["tokenType"], "DPoP")
        XCTAssertEqual(try record(bank.result("refresh", ["provider": "bank"]))["refreshed"], true, "a refresh with a new assertion and the proof")
        let key = try String(contentsOfFile: directory.appendingPathComponent("config/bank.client-key.pem").path, encoding: .utf8)
        try checkNoSecrets([bank], secrets: key.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init))

        // What the server refuses: the same client without the profile (no PAR, no DPoP).
        let plain = try agent(["flow": "authorizationCode", "clientId": "bank",
                               "clientAuth": ["method": "private_key_jwt", "key": .string(directory.appendingPathComponent("config/bank.client-key.pem").path)]])
        let refused = try browserLogin(plain)
        XCTAssertEqual(refused["error"]?["data"]?["serverDescription"], "FAPI 2.0 requires pushed authorization requests: Pushed Authorization Request must be used")
    }

    func testWhatFAPI2ForbidsTheAgentRefusesNamingTheRequirement() throws {
        let (config, jwk) = try fapiProvider()
        issuer.setClient("bank", secret: .some(nil), jwk: jwk, fapi2: true)

        issuer.injectDiscoveryFault(.noIssSupport)
        let noIss = try AgentConversation(arguments: ["--config", config], environment: ["XDG_STATE_HOME": directory.path]).call("login", ["provider": "bank"])
        XCTAssertEqual(noIss["error"]?["message"], "The bank login was refused: FAPI 2.0 requires the server to identify itself in authorization responses (RFC 9207), and its metadata has no authorization_response_iss_parameter_supported.")
        issuer.clearDiscoveryFaults()

        issuer.answerBearerToDPoPNext(1)
        let bearer = try browserLogin(try AgentConversation(arguments: ["--config", config], environment: ["XDG_STATE_HOME": directory.path]), provider: "bank")
        XCTAssertEqual(bearer["error"]?["code"], 1008, "\(bearer)")
        XCTAssertTrue(bearer["error"]?["message"]?.stringValue?.contains("FAPI 2.0 forbids plain Bearer tokens") == true, "\(bearer)")

        let base: JSONObject = ["id": "bank", "flow": "authorizationCode", "origins": ["https://bank.example.com"], "issuer": .string(issuer.baseURL),
                                "clientId": "bank", "profile": "fapi2"]
        var basic = base
        basic["clientSecret"] = "bank-secret"
        var password = base
        password["flow"] = "password"
        password["clientAuth"] = ["method": "private_key_jwt", "key": "/nonexistent.pem"]
        var bearerConfig = password
        bearerConfig["flow"] = "authorizationCode"
        bearerConfig["dpop"] = false
        var secretJWT = basic
        secretJWT["clientAuth"] = ["method": "client_secret_jwt"]
        for (provider, expected) in [
            (basic, "FAPI 2.0 (profile \"fapi2\") forbids client_secret_basic: authenticate with private_key_jwt"),
            (password, "FAPI 2.0 (profile \"fapi2\") allows only the authorization code response type (and client credentials): flow \"password\" is not allowed"),
            (bearerConfig, "FAPI 2.0 (profile \"fapi2\") requires sender-constrained tokens: \"dpop\" cannot be false"),
            (secretJWT, "FAPI 2.0 (profile \"fapi2\") requires client authentication by private_key_jwt, not client_secret_jwt"),
        ] {
            let check = try CLIHarness.run(AgentProcess.binaryURL.path, ["--config", try write(["providers": [.object(provider)]]), "config", "check"])
            XCTAssertEqual(check.status, 2, check.stderr)
            XCTAssertTrue(check.stderr.contains(expected), "\(expected)\n\(check.stderr)")
        }
    }

    /// A key file others can read stops the agent at start, naming the fix.
    func testAKeyFileOthersCanReadIsRefused() throws {
        let (config, _) = try fapiProvider()
        let key = directory.appendingPathComponent("config/bank.client-key.pem").path
        XCTAssertEqual(chmod(key, 0o644), 0)
        let check = try CLIHarness.run(AgentProcess.binaryURL.path, ["--config", config, "config", "check"])
        XCTAssertEqual(check.status, 2)
        XCTAssertTrue(check.stderr.contains("other users can read or change it (mode 644); run: chmod 600 \(key)"), check.stderr)
    }

    /// Where a keyring answers, `--generate-key` keeps the key there (`key: "keyring"`), no file is written,
    /// and the agent and a second process sign with it.
    func testAGeneratedKeyIsKeptInTheKeyringWhereOneAnswers() throws {
        let keyring = try SecretServiceSession()
        let (config, jwk) = try fapiProvider(environment: keyring.environment)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.appendingPathComponent("config/bank.client-key.pem").path))
        let written = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: config))))
        XCTAssertEqual(written["providers"]?.arrayValue?.first?["clientAuth"]?["key"], "keyring")
        let pem = try XCTUnwrap(try keyring.lookup(["store", "client-keys", "record", "bank"]), "secret-tool finds the key")
        XCTAssertTrue(pem.hasPrefix("-----BEGIN EC PRIVATE KEY-----"))
        issuer.setClient("bank", secret: .some(nil), jwk: jwk, fapi2: true)
        let environment = keyring.environment.merging(["XDG_STATE_HOME": directory.path]) { $1 }
        let bank = try AgentConversation(arguments: ["--config", config, "--log-level", "debug"], environment: environment)
        XCTAssertNotNil(try browserLogin(bank, provider: "bank")["result"])
        let other = try AgentConversation(arguments: ["--config", config], environment: environment)
        XCTAssertEqual(try record(other.result("refresh", ["provider": "bank"]))["refreshed"], true, "another process signs with the kept key")
        try checkNoSecrets([bank, other], secrets: pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.map(String.init))
    }

    // MARK: Helpers

    /// No session bus: `--generate-key` keeps the key in a file beside the configuration.
    static let noKeyring = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/auth-agent-test-bus"]

    /// `config add bank … --profile fapi2 --generate-key` against the issuer: the configuration's path and the printed JWK.
    private func fapiProvider(environment: [String: String] = noKeyring) throws -> (String, JSONObject) {
        let config = directory.appendingPathComponent("config/config.json").path
        let added = try CLIHarness.run(AgentProcess.binaryURL.path, ["--config", config, "config", "add", "bank", "--issuer", issuer.baseURL,
                                                                     "--client-id", "bank", "--origin", "https://bank.example.com",
                                                                     "--flow", "authorizationCode", "--profile", "fapi2", "--generate-key"],
                                       environment: environment)
        XCTAssertEqual(added.status, 0, added.stderr)
        output += added.stdout + added.stderr
        guard environment == Self.noKeyring else { return (config, try XCTUnwrap(JSONParser.parse(Array(added.stdout.utf8)).objectValue)) }
        let jwk = try XCTUnwrap(JSONParser.parse(Array(added.stdout.utf8)).objectValue, added.stdout)
        XCTAssertEqual(jwk["kty"], "EC")
        XCTAssertNil(jwk["d"], "only the public key is printed")
        XCTAssertTrue(added.stderr.contains("Register this public key"), added.stderr)
        var attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("config/bank.client-key.pem").path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        attributes = [:]
        return (config, jwk)
    }

    /// An agent with one provider `p` on the issuer (plus what `provider` says), sessions in memory.
    private func agent(_ provider: JSONObject) throws -> AgentConversation {
        var p: JSONObject = ["id": "p", "displayName": "P", "origins": ["https://p.example.com"], "issuer": .string(issuer.baseURL), "scopes": ["openid"]]
        for (key, value) in provider.members { p[key] = value }
        return try AgentConversation(arguments: ["--config", try write(["store": ["kind": "memory"], "providers": [.object(p)]]), "--log-level", "debug"])
    }

    private func write(_ config: JSONValue) throws -> String {
        let path = directory.appendingPathComponent("config-\(UUID().uuidString).json")
        try Data(JSONSerializer.bytes(config)).write(to: path)
        return path.path
    }

    /// A browser login the dev issuer approves at once: the login's answer.
    private func browserLogin(_ agent: AgentConversation, provider: String = "p") throws -> JSONValue {
        try browserLoginWithURLs(agent, provider: provider).0
    }

    private func browserLoginWithURLs(_ agent: AgentConversation, provider: String = "p") throws -> (JSONValue, [String]) {
        let login = try agent.send("login", ["provider": .string(provider)])
        let message = try record(agent.notificationOrAnswer("loginPrompt", to: login))
        guard message["method"] != nil else { return (message, []) }
        let url = try url(of: message)
        _ = try? Browser(timeout: 10).navigate(url)
        return (try record(agent.answer(to: login)), [url])
    }

    private func url(of prompt: JSONValue) throws -> String { try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "\(prompt)") }

    private func names(_ url: String) throws -> [String] { try XCTUnwrap(URLComponents(string: url)?.queryItems).map(\.name).sorted() }

    @discardableResult
    private func record(_ value: JSONValue) -> JSONValue {
        output += JSONSerializer.string(value) + "\n"
        return value
    }

    private func checkNoSecrets(_ agents: [AgentConversation], secrets: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let all = output + agents.map(\.agent.stderr).joined(separator: "\n")
        XCTAssertFalse(all.isEmpty)
        for secret in secrets { XCTAssertFalse(all.contains(secret), "a secret shows in the output", file: file, line: line) }
    }
}
