import Foundation
import JSON
import TestSupport
import XCTest

/// Issue 31 item 2's `offline_access` rule at django-oauth-toolkit (`Tests/Interop/start-server.sh`,
/// whose scopes include `offline_access`, so its metadata lists it). DOT has no RFC 7591
/// registration: the agent learns the API with the client configured for DOT's issuer
/// (`clients`). DOT treats `offline_access` as a scope like any other: it grants it when asked and
/// consented to, and issues refresh tokens with every code grant whether or not it was asked for.
/// Skipped, with the reason, where python3's venv or PyPI is missing, or when AUTH_AGENT_SKIP_INTEROP=1.
final class DjangoOfflineAccessTests: XCTestCase {
    private static let shared = InteropServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    func testLearningAtDjangoOAuthToolkitAsksForOfflineAccessAndRefreshes() throws {
        if ProcessInfo.processInfo.environment["AUTH_AGENT_SKIP_INTEROP"] == "1" {
            throw XCTSkip("interop tests turned off by AUTH_AGENT_SKIP_INTEROP=1")
        }
        try CLIHarness.requirePython()
        let server = try Self.shared.server(InteropTests.startServer)
        let directory = try TemporaryDirectory(prefix: "auth-agent-dot-offline").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let issuer = server["baseUrl"] + "/o"
        let resource = try ScriptServer("protected_resource.py", [issuer, "openid read"])
        let config: JSONValue = ["store": ["kind": "file", "path": .string(directory.appendingPathComponent("store").path)], "providers": [],
                                 "clients": [["issuer": .string(issuer), "clientId": .string(server.client("authorizationCode").id)]]]
        let path = directory.appendingPathComponent("config.json")
        try Data(JSONSerializer.bytes(config)).write(to: path, options: .atomic)
        let agent = try AgentConversation(arguments: ["--config", path.path], environment: ["XDG_STATE_HOME": directory.path])

        let loginID = try agent.send("login", ["resource": .string("http://127.0.0.1:\(resource.port)/api"), "openBrowser": false])
        let prompt = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 20)
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "a browser login: \(prompt)")
        let scope = URLComponents(string: url)?.queryItems?.first { $0.name == "scope" }?.value?.replacingOccurrences(of: "+", with: " ") ?? ""
        XCTAssertEqual(scope.split(separator: " ").sorted(), ["offline_access", "openid", "read"], "DOT lists offline_access: the login asks for it")
        var user = InteropUser(browser: Browser(timeout: 10), username: server["username"], password: server["password"])
        _ = try user.complete(startingAt: url)
        let answer = try agent.answer(to: loginID, timeout: 20)
        let provider = try XCTUnwrap(answer["result"]?["provider"]?.stringValue, "logged in: \(answer)")

        let access = try XCTUnwrap(try agent.result("token", ["provider": .string(provider)])["accessToken"]?.stringValue)
        let client = server.client("clientCredentials")
        let basic = Data("\(client.id):\(client.secret ?? "")".utf8).base64EncodedString()
        let introspected = try Browser(timeout: 10).fetch("POST", try XCTUnwrap(URL(string: server["introspectionEndpoint"])), form: [("token", access)],
                                                          headers: [("Authorization", "Basic " + basic)])
        let granted = try JSONParser.parse(Array(introspected.body.utf8))["scope"]?.stringValue ?? ""
        XCTAssertTrue(granted.split(separator: " ").contains("offline_access"), "DOT granted it: \(introspected.body)")
        XCTAssertEqual(try agent.result("refresh", ["provider": .string(provider)])["refreshed"], true, "the refresh token works")
    }
}
