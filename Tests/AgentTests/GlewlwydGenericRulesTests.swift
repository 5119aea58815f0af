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

/// Issue 31 item 2's generic rules against a real server: Glewlwyd 2.7.5 (Debian's `glewlwyd`),
/// its `oidc-idp` instance set up by `Tests/Interop/start-glewlwyd.sh` with `offline_access` in
/// `scopes_supported` and open RFC 7591 registration. A loopback protected resource
/// (`Tests/CLI/protected_resource.py`) names it, so `login {resource}` learns it as a person would:
/// metadata, registration, a browser login, then a refresh.
///
/// What Glewlwyd does (seen here, and in its `protocol_oidc.c` at v2.7.5):
/// - `offline_access` is a scope like any other: refresh tokens come with every code grant of a
///   client allowed `refresh_token`, asked for or not, and no `prompt=consent` is needed. So the
///   rule shows in what was asked and granted (the authorization URL, the token's `scope`), not
///   in whether a refresh token came.
/// - Its registration takes `application_type` `web` or `native` (another value is refused with
///   `invalid_client_metadata`; absent means `web`) and keeps neither: its admin API and RFC 7592
///   read-back do not show it. Loopback redirects match exactly, port included, native or not.
/// - Its registration ignores `scope` (the client's scope list comes from the plugin's
///   `register-client-credentials-scope`): a scope it does not list is not refused.
/// - Its registration refuses RFC 8628's grant type `urn:ietf:params:oauth:grant-type:device_code`
///   (`invalid_client_metadata`: it wants its own `device_authorization`), although its metadata
///   lists that very URN in `grant_types_supported`.
/// Skipped, with the reason, where glewlwyd is not installed, or when AUTH_AGENT_SKIP_INTEROP=1.
final class GlewlwydGenericRulesTests: XCTestCase {
    private static let shared = InteropServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private var server: InteropServer!
    private var directory: URL!

    override func setUpWithError() throws {
        try CLIHarness.requirePython()
        (server, directory) = try Self.shared.setUp(GlewlwydDPoPTests.startServer, directoryPrefix: "auth-agent-glewlwyd-rules")
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        server = nil
    }

    private var issuer: String { server.info["plugins"]?["idp"]?["issuer"]?.stringValue ?? "" }

    /// Learning an API of a server listing `offline_access`: the registration (a native client, its
    /// device grant left out after Glewlwyd's refusal) is accepted, the browser login asks for
    /// `offline_access`, Glewlwyd grants it, and the refresh token it came with refreshes.
    func testLearningAsksForOfflineAccessRegistersANativeClientAndRefreshes() throws {
        let resource = try ScriptServer("protected_resource.py", [issuer, "openid"])
        let api = "http://127.0.0.1:\(resource.port)/api"
        let agent = try AgentConversation.withoutProviders(storeIn: directory)
        let loginID = try agent.send("login", ["resource": .string(api), "openBrowser": false])
        let prompt = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 20)
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "a browser login: \(prompt)")
        let query = try XCTUnwrap(URLComponents(string: url)?.queryItems)
        let scope = query.first { $0.name == "scope" }?.value?.replacingOccurrences(of: "+", with: " ").split(separator: " ").map(String.init) ?? []
        XCTAssertTrue(scope.contains("offline_access"), "the server lists offline_access: the login asks for it: \(scope)")
        let clientId = try XCTUnwrap(query.first { $0.name == "client_id" }?.value)

        try approve(url, clientId: clientId, scope: scope.joined(separator: " "))
        let answer = try agent.answer(to: loginID, timeout: 20)
        let provider = try XCTUnwrap(answer["result"]?["provider"]?.stringValue, "logged in: \(answer)")

        let token = try agent.result("token", ["provider": .string(provider)])
        let claims = try Self.claims(try XCTUnwrap(token["accessToken"]?.stringValue))
        XCTAssertTrue(claims["scope"]?.stringValue?.split(separator: " ").contains("offline_access") == true,
                      "Glewlwyd granted offline_access: \(claims)")
        XCTAssertEqual(try agent.result("refresh", ["provider": .string(provider)])["refreshed"], true, "the refresh token works")
        XCTAssertNotEqual(try agent.result("token", ["provider": .string(provider)])["accessToken"], token["accessToken"])
    }

    /// RFC 8707 switched on at Glewlwyd (`oidc-target`: `resource-allowed`, a `resource-scope` map
    /// without this API): the learned login's `resource` is refused at the authorization endpoint —
    /// the browser comes back with `error=invalid_target` after the person signed in. The agent
    /// starts the browser login again without `resource` (a second prompt; Glewlwyd's session makes
    /// it pass at once), and the refresh after it leaves `resource` out too.
    func testAResourceRefusedAtTheAuthorizationEndpointIsAskedForAgainWithoutIt() throws {
        let issuer = server.info["plugins"]?["target"]?["issuer"]?.stringValue ?? ""
        let resource = try ScriptServer("protected_resource.py", [issuer, "openid"])
        let api = "http://127.0.0.1:\(resource.port)/api"
        let agent = try AgentConversation.withoutProviders(storeIn: directory)
        let loginID = try agent.send("login", ["resource": .string(api), "openBrowser": false])
        let browser = Browser(timeout: 10)
        var urls: [String] = []
        var answer: JSONValue = .null
        for _ in 0..<3 {
            let message = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 20)
            guard message["method"] != nil, let url = message["params"]?["url"]?.stringValue else {
                answer = message
                break
            }
            urls.append(url)
            let query = try XCTUnwrap(URLComponents(string: url)?.queryItems)
            let clientId = try XCTUnwrap(query.first { $0.name == "client_id" }?.value)
            try approve(url, clientId: clientId, scope: "openid offline_access", browser: browser)
        }
        XCTAssertEqual(urls.count, 2, "a second browser prompt: \(urls)")
        XCTAssertTrue(urls.first?.contains("resource=") == true, "\(urls)")
        XCTAssertFalse(urls.last?.contains("resource=") ?? true, "\(urls)")
        let provider = try XCTUnwrap(answer["result"]?["provider"]?.stringValue, "logged in: \(answer)")
        XCTAssertEqual(try agent.result("refresh", ["provider": .string(provider)])["refreshed"], true, "and refreshes (a refused resource is not sent again; were it sent, the token endpoint would refuse it too)")
    }

    /// Glewlwyd checks `application_type` (so the agent's registrations, which the test above saw
    /// accepted, carry a value it takes): `native` is registered, another value refused.
    func testGlewlwydTakesANativeRegistrationAndRefusesAnUnknownApplicationType() throws {
        let endpoint = try XCTUnwrap(URL(string: issuer + "/register"))
        func register(_ type: String) throws -> Browser.Response {
            let body: JSONValue = ["client_name": "probe", "redirect_uris": ["http://127.0.0.1:1/callback"], "token_endpoint_auth_method": "none",
                                   "grant_types": ["authorization_code"], "application_type": .string(type)]
            return try Browser(timeout: 10).fetch("POST", endpoint, json: JSONSerializer.string(body))
        }
        XCTAssertEqual(try register("native").status, 200)
        let refused = try register("desktop")
        XCTAssertEqual(refused.status, 400)
        XCTAssertTrue(refused.body.contains("invalid_client_metadata"), refused.body)
    }

    // MARK: Helpers

    /// The person at Glewlwyd's pages, done as their script does: the authorization endpoint sends
    /// the browser to `login.html?…&callback_url=…`; sign in, consent to `scope`, continue. A browser
    /// signed in already (`browser` from an earlier round) goes straight back to the agent.
    private func approve(_ url: String, clientId: String, scope: String, browser: Browser = Browser(timeout: 10)) throws {
        let first = try browser.navigate(url, stopAt: { $0.path.hasSuffix("/login.html") })
        guard let loginPage = first.location.flatMap({ URLComponents(string: $0) }), loginPage.path.hasSuffix("/login.html") else {
            XCTAssertEqual(first.url.host, "127.0.0.1", "signed in already: back at the agent's callback: \(browser.trail)")
            return
        }
        let callback = try XCTUnwrap(loginPage.queryItems?.first { $0.name == "callback_url" }?.value, "\(loginPage)")
        let api = server["apiUrl"]
        let credentials = JSONSerializer.string(["username": .string(server["username"]), "password": .string(server["password"])])
        XCTAssertEqual(try browser.fetch("POST", try XCTUnwrap(URL(string: api + "/auth/")), json: credentials).status, 200)
        let consent = try browser.fetch("PUT", try XCTUnwrap(URL(string: api + "/auth/grant/" + clientId)), json: JSONSerializer.string(["scope": .string(scope)]))
        XCTAssertEqual(consent.status, 200, "consent: \(consent.body)")
        let last = try browser.navigate(callback + "&g_continue")
        XCTAssertEqual(last.url.host, "127.0.0.1", "the browser ends at the agent's callback: \(browser.trail)")
    }

    private static func claims(_ jwt: String) throws -> JSONValue {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3, "a JWS")
        return try JSONParser.parse(try XCTUnwrap(Base64URL.decode(String(parts[1]))))
    }
}

extension AgentConversation {
    /// An agent with no provider configured (one that learns what it logs in to), its file store in `directory`.
    static func withoutProviders(storeIn directory: URL) throws -> AgentConversation {
        let config: JSONValue = ["store": ["kind": "file", "path": .string(directory.appendingPathComponent("store").path)], "providers": []]
        let path = directory.appendingPathComponent("config.json")
        try Data(JSONSerializer.bytes(config)).write(to: path, options: .atomic)
        return try AgentConversation(arguments: ["--config", path.path], environment: ["XDG_STATE_HOME": directory.path])
    }
}
