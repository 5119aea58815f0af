import Foundation
import JSON
import TestSupport
import XCTest

/// Issue 31 item 2 against a real server that refuses a registration for its `scope`: FastMCP's
/// authorization server (the MCP Python SDK's RFC 7591 handler answers a `scope` with a value
/// outside its `valid_scopes` — its metadata's `scopes_supported` — with 400
/// `invalid_client_metadata`, "Requested scopes are not valid: …"). FastMCP's own resource
/// metadata lists exactly those scopes, so the agent never asks it for another; a resource of
/// our own (`Tests/CLI/protected_resource.py`) that names FastMCP's server and lists a scope it
/// does not know makes it. (Glewlwyd ignores a registration's `scope` and django-oauth-toolkit
/// has no RFC 7591 registration: neither refuses.)
final class RegistrationScopeFastMCPTests: XCTestCase {
    private static let shared = FastMCPServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    /// The resource lists `mcp:read extra`, FastMCP only `mcp:read mcp:write`: the registration is
    /// refused, asked again with `mcp:read` alone and accepted. The login that follows asks for no
    /// scope the registration was refused (FastMCP's `/authorize` refuses a scope its client was not
    /// registered with, `invalid_scope`): `mcp:read`, and it logs in.
    func testARegistrationRefusedForAScopeTheServerDoesNotListIsRetriedWithTheListedOnes() throws {
        try CLIHarness.requirePython()
        let server = try Self.shared.server()
        let resource = try ScriptServer("protected_resource.py", [server["issuer"], "mcp:read extra"])
        let directory = try TemporaryDirectory(prefix: "auth-agent-registration-scope").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = try AgentConversation.withoutProviders(storeIn: directory)

        let loginID = try agent.send("login", ["resource": .string("http://127.0.0.1:\(resource.port)/api"), "openBrowser": false])
        let prompt = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 20)
        let registrations = server.requests().filter { $0.path == "/register" }.map(\.status)
        XCTAssertEqual(registrations, [400, 201], "refused for extra, then accepted with mcp:read alone: \(server.requests())")
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "registered, then a browser login: \(prompt)")
        _ = try? FastMCPServer.approve(url)
        XCTAssertTrue(url.contains("&scope=mcp%3Aread&"), "the login asks for no scope the registration was refused: \(url)")
        let answer = try agent.answer(to: loginID, timeout: 20)
        XCTAssertNotNil(answer["result"]?["account"], "logged in with the scope the registration allows: \(answer)")
    }
}
