import DevIssuer
import Foundation
import AuthCore
import JSON
import TestSupport
import XCTest

/// Issue 32 items 4 and 5 end to end, with the built agent against two dev issuers: `idp` (the enterprise IdP,
/// where `corp` logs in) and `server` (an API's authorization server that trusts `idp`'s ID-JAGs). `exchanged`
/// is an RFC 8693 exchange of corp's access token; `api` gets its tokens by Enterprise-Managed Authorization
/// (ID-JAG, then jwt-bearer) — no browser, no login of its own. No output shows a token or the client's secret.
final class EnterpriseAuthorizationTests: XCTestCase {
    private var idp: DevIssuer!
    private var server: DevIssuer!
    private var directory: URL!
    private var output = ""

    override func setUpWithError() throws {
        idp = DevIssuer()
        try idp.start()
        var options = DevIssuerOptions()
        options.trustedIssuers = [idp.baseURL]
        server = DevIssuer(options: options)
        try server.start()
        directory = try TemporaryDirectory(prefix: "auth-agent-idjag").url
        output = ""
    }

    override func tearDown() {
        idp.stop()
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var providers: [JSONValue] {
        [
            ["id": "corp", "displayName": "Corp SSO", "flow": "password", "origins": .array([.string(idp.baseURL)]),
             "issuer": .string(idp.baseURL), "clientId": "cli", "scopes": ["openid"]],
            ["id": "exchanged", "flow": "tokenExchange", "from": "corp", "subjectTokenType": "access_token", "audience": "api",
             "origins": ["https://exchanged.example"]],
            ["id": "api", "displayName": "The API", "flow": "idJag", "from": "corp", "issuer": .string(server.baseURL),
             "resource": .string(server.baseURL + "/api"), "clientId": "cli", "origins": .array([.string(server.baseURL)])],
        ]
    }

    private func agent(_ extra: [JSONValue] = []) throws -> AgentConversation {
        try AgentConversation(arguments: ["--config", try write(providers + extra), "--log-level", "debug"], environment: ["XDG_STATE_HOME": directory.path])
    }

    private func write(_ providers: [JSONValue], learn: JSONValue? = nil) throws -> String {
        let path = directory.appendingPathComponent("config.json").path
        let store: JSONValue = ["kind": "file", "path": .string(directory.appendingPathComponent("store").path)]
        var config: JSONObject = ["store": store, "providers": .array(providers)]
        if let learn { config["learn"] = learn }
        _ = FileManager.default.createFile(atPath: path, contents: Data(JSONSerializer.bytes(.object(config))), attributes: [.posixPermissions: 0o600])
        return path
    }

    @discardableResult
    private func record(_ value: JSONValue) -> JSONValue {
        output += JSONSerializer.string(value) + "\n"
        return value
    }

    private func logInToCorp(_ agent: AgentConversation) throws {
        XCTAssertNotNil(record(try agent.call("login", ["provider": "corp", "credentials": ["username": "alice", "password": "wonderland"]]))["result"])
    }

    func testAnExchangedTokenIsObtainedWhenAskedForAndMadeAgainWhenTheSubjectChanges() throws {
        let agent = try agent()
        let before = record(try agent.call("token", ["provider": "exchanged"]))
        XCTAssertEqual(before["error"]?["data"]?["reason"], "notLoggedIn", "\(before)")
        XCTAssertEqual(before["error"]?["data"]?["provider"], "corp", "the subject is the one to log in to: \(before)")
        try logInToCorp(agent)

        let token = record(try agent.result("token", ["provider": "exchanged"]))
        let claims = try XCTUnwrap(JWT.claims(of: try XCTUnwrap(token["accessToken"]?.stringValue)))
        XCTAssertEqual(claims["sub"], "alice")
        XCTAssertEqual(claims["aud"], "api")
        XCTAssertEqual(idp.count("token_exchange:alice"), 1)
        XCTAssertEqual(record(try agent.result("token", ["provider": "exchanged"]))["accessToken"], token["accessToken"], "kept while fresh")
        XCTAssertEqual(idp.count("token_exchange:alice"), 1)

        // corp's session changes (a refresh): the next request exchanges again.
        XCTAssertEqual(record(try agent.result("refresh", ["provider": "corp"]))["refreshed"], true)
        XCTAssertNotEqual(record(try agent.result("token", ["provider": "exchanged"]))["accessToken"], token["accessToken"])
        XCTAssertEqual(idp.count("token_exchange:alice"), 2)
        // An explicit refresh exchanges again too.
        XCTAssertEqual(record(try agent.result("refresh", ["provider": "exchanged"]))["refreshed"], true)
        XCTAssertEqual(idp.count("token_exchange:alice"), 3)
        try checkNoSecrets(agent, [try XCTUnwrap(token["accessToken"]?.stringValue)])
    }

    func testEnterpriseManagedAuthorizationSignsAndFetchesWithoutABrowser() throws {
        let agent = try agent()
        try logInToCorp(agent)
        let fetched = record(try agent.result("fetch", ["request": ["method": "GET", "url": .string(server.baseURL + "/api/me")]]))
        XCTAssertEqual(fetched["status"], 200, "\(fetched)")
        let me = try JSONParser.parse(Array(try XCTUnwrap(fetched["body"]?.stringValue, "\(fetched)").utf8))
        XCTAssertEqual(me["sub"], "alice", "\(me)")
        XCTAssertEqual(idp.count("id_jag:alice"), 1)
        XCTAssertEqual(server.count("jwt_bearer:alice"), 1)
        XCTAssertEqual(server.count("authorize"), 0, "no browser login at the API's server")

        let signed = record(try agent.result("sign", ["request": ["method": "GET", "url": .string(server.baseURL + "/api/me")]]))
        let authorization = try XCTUnwrap(signed["headers"]?["Authorization"]?.stringValue, "\(signed)")
        XCTAssertTrue(authorization.hasPrefix("Bearer "))
        let token = record(try agent.result("token", ["provider": "api"]))
        XCTAssertEqual("Bearer " + (token["accessToken"]?.stringValue ?? ""), authorization)
        let claims = try XCTUnwrap(JWT.claims(of: try XCTUnwrap(token["accessToken"]?.stringValue)))
        XCTAssertEqual(claims["iss"]?.stringValue, server.baseURL)
        XCTAssertEqual(claims["aud"]?.stringValue, server.baseURL + "/api")
        XCTAssertEqual(server.count("jwt_bearer:alice"), 1, "one token for fetch, sign and token")
        try checkNoSecrets(agent, [try XCTUnwrap(token["accessToken"]?.stringValue)])
    }

    /// Two agent processes on one store asking at once make one ID-JAG and one grant between them; a stale
    /// token is made again once between them too (the refresh lock).
    func testProcessesSharingAStoreObtainAndRenewOnce() throws {
        let agents = [try agent(), try agent()]
        try logInToCorp(agents[0])
        let first = try agents.map { try $0.send("token", ["provider": "api"]) }
        for (agent, id) in zip(agents, first) { XCTAssertNotNil(record(try agent.answer(to: id))["result"]) }
        XCTAssertEqual(idp.count("id_jag:alice"), 1, "one ID-JAG for both processes")
        XCTAssertEqual(server.count("jwt_bearer:alice"), 1)
        let token = try agents[0].result("token", ["provider": "api"])["accessToken"]
        let renewed = try agents.map { try $0.send("refresh", ["provider": "api", "failedAuthorization": .string("Bearer " + (token?.stringValue ?? ""))]) }
        for (agent, id) in zip(agents, renewed) { XCTAssertNotNil(record(try agent.answer(to: id))["result"]) }
        XCTAssertEqual(server.count("jwt_bearer:alice"), 2, "one renewal for both processes")
    }

    /// The command line, as users run it: `login corp`, then `login api` (the exchange, no prompt), `token api`
    /// and `fetch` of the API; the token goes to stdout only, nothing secret to stderr.
    func testTheCommandLine() throws {
        let path = try write(providers)
        let environment = ["AUTH_AGENT_CONFIG": path, "XDG_STATE_HOME": directory.path]
        func run(_ arguments: [String], stdin: String = "") throws -> CLIHarness.Finished {
            try CLIHarness.run(AgentProcess.binaryURL.path, arguments, stdin: stdin, environment: environment)
        }
        XCTAssertEqual(try run(["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n").status, 0)
        let login = try run(["login", "api"])
        XCTAssertEqual(login.status, 0, login.stderr)
        let token = try run(["token", "api"])
        XCTAssertEqual(token.status, 0, token.stderr)
        let claims = try XCTUnwrap(JWT.claims(of: token.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), token.stdout)
        XCTAssertEqual(claims["aud"]?.stringValue, server.baseURL + "/api")
        let fetched = try run(["fetch", server.baseURL + "/api/me"])
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertTrue(fetched.stdout.contains("alice"), fetched.stdout)
        XCTAssertEqual(server.count("jwt_bearer:alice"), 1, "the login's token, kept for token and fetch")
        for r in [login, token, fetched] {
            XCTAssertFalse(r.stderr.contains("eyJ") || r.stderr.contains("wonderland"), r.stderr)
        }
        XCTAssertFalse(login.stdout.contains("eyJ") || fetched.stdout.contains("eyJ"))
    }

    func testTheDerivedProvidersAreLoggedOutWithTheirSubject() throws {
        let agent = try agent()
        _ = try agent.result("subscribe", ["events": ["userLoggedIn", "userLoggedOut"]])
        try logInToCorp(agent)
        _ = try agent.result("token", ["provider": "api"])
        _ = try agent.result("token", ["provider": "exchanged"])
        XCTAssertNotNil(record(try agent.call("logout", ["provider": "corp"]))["result"])
        var reasons: [String: String] = [:]
        for _ in 0..<3 {
            let event = record(try agent.notification("userLoggedOut"))
            reasons[event["params"]?["provider"]?.stringValue ?? "?"] = event["params"]?["reason"]?.stringValue
        }
        XCTAssertEqual(reasons, ["corp": "logout", "api": "subjectLoggedOut", "exchanged": "subjectLoggedOut"])
        let after = record(try agent.call("token", ["provider": "api"]))
        XCTAssertEqual(after["error"]?["data"]?["provider"], "corp", "\(after)")
        XCTAssertEqual(after["error"]?["data"]?["reason"], "notLoggedIn")
    }

    /// `actor`: another provider's access token goes as the actor_token; the issued token's `act` names it.
    func testAnActorIsPassedThrough() throws {
        let agent = try agent([
            ["id": "robot", "flow": "clientCredentials", "issuer": .string(idp.baseURL), "clientId": "svc", "clientSecret": "svc-secret",
             "scopes": ["read"], "origins": ["https://robot.example"]],
            ["id": "delegated", "flow": "tokenExchange", "from": "corp", "subjectTokenType": "access_token", "actor": "robot",
             "origins": ["https://delegated.example"]],
        ])
        try logInToCorp(agent)
        XCTAssertNotNil(record(try agent.call("login", ["provider": "robot"]))["result"])
        let token = record(try agent.result("token", ["provider": "delegated"]))
        let claims = try XCTUnwrap(JWT.claims(of: try XCTUnwrap(token["accessToken"]?.stringValue)))
        XCTAssertEqual(claims["sub"], "alice")
        XCTAssertEqual(claims["act"], ["sub": "svc"])
        XCTAssertFalse(output.contains("svc-secret") || agent.agent.stderr.contains("svc-secret"))
    }

    /// corp's ID token about to expire: corp is refreshed first, and the fresh ID token is exchanged.
    func testAnExpiringIDTokenRefreshesTheSubjectFirst() throws {
        idp.stop()
        idp = DevIssuer(options: DevIssuerOptions(accessTokenLifetime: 8))
        try idp.start()
        server.stop()
        var options = DevIssuerOptions()
        options.trustedIssuers = [idp.baseURL]
        server = DevIssuer(options: options)
        try server.start()
        let agent = try agent()
        try logInToCorp(agent)
        XCTAssertNotNil(record(try agent.call("token", ["provider": "api"]))["result"])
        XCTAssertEqual(idp.count("token.refresh_token"), 1, "corp refreshed before the ID-JAG")
        XCTAssertEqual(idp.count("id_jag:alice"), 1)
    }

    func testErrorsNameTheirStep() throws {
        let untrusting = DevIssuer()
        try untrusting.start()
        defer { untrusting.stop() }
        let agent = try agent([["id": "other", "flow": "idJag", "from": "corp", "issuer": .string(untrusting.baseURL), "clientId": "cli",
                                "origins": .array([.string(untrusting.baseURL)])]])
        try logInToCorp(agent)
        let jwtBearer = record(try agent.call("token", ["provider": "other"]))
        XCTAssertEqual(jwtBearer["error"]?["data"]?["step"], "jwtBearer", "\(jwtBearer)")
        XCTAssertEqual(jwtBearer["error"]?["data"]?["serverDescription"], "grant_type urn:ietf:params:oauth:grant-type:jwt-bearer is not supported")
        XCTAssertEqual(jwtBearer["error"]?["code"], 1008)

        idp.failNext(1, status: 503)
        let idJag = record(try agent.call("token", ["provider": "api"]))
        XCTAssertEqual(idJag["error"]?["data"]?["step"], "idJag", "\(idJag)")
        XCTAssertEqual(idJag["error"]?["data"]?["reason"], "authServerUnavailable")
        XCTAssertNotNil(record(try agent.call("token", ["provider": "api"]))["result"], "the next request tries again")
    }

    /// `auth-agent mcp` for an MCP server the agent has never seen, whose authorization server takes ID-JAGs: learned
    /// with `learn.enterpriseIdP`, its token by ID-JAG from corp's session — no browser, no registration.
    func testTheMCPBridgeLearnsAServerThroughTheEnterpriseIdP() throws {
        let path = try write([providers[0]], learn: ["enterpriseIdP": "corp"])
        let environment = ["XDG_STATE_HOME": directory.path]
        let host = try AgentConversation(arguments: ["--config", path], environment: environment)
        try logInToCorp(host)
        let bridge = try AgentProcess(arguments: ["mcp", server.baseURL + "/mcp", "--config", path, "--log-level", "debug"], environment: environment)
        try bridge.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#)
        try bridge.send(#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}"#)
        var answers: [JSONValue] = []
        while answers.count < 2, let line = bridge.nextLine(timeout: 15) { answers.append(record(try JSONParser.parse([UInt8](line)))) }
        XCTAssertEqual(answers.count, 2, bridge.stderr)
        XCTAssertNotNil(answers.first?["result"], "\(answers)")
        XCTAssertTrue(JSONSerializer.string(answers.last ?? .null).contains("alice"), "\(answers)")
        bridge.closeInput()
        XCTAssertEqual(bridge.waitForExit(timeout: 5), 0)
        XCTAssertEqual(idp.count("id_jag:alice"), 1)
        XCTAssertEqual(server.count("jwt_bearer:alice"), 1)
        XCTAssertEqual(server.count("authorize") + server.count("register") + server.count("par"), 0, "no browser, no registration")
        let secrets = bridge.stderr + host.agent.stderr
        XCTAssertFalse(secrets.contains("wonderland"))
        XCTAssertFalse(secrets.contains("eyJ"), "no token in the logs")
    }

    private func checkNoSecrets(_ agent: AgentConversation, _ secrets: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let logs = agent.agent.stderr
        XCTAssertFalse(logs.isEmpty)
        for secret in secrets { XCTAssertFalse(logs.contains(secret), "a token shows in the agent's log", file: file, line: line) }
    }
}
