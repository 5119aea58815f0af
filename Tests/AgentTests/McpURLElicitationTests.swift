import Foundation
import JSON
import XCTest

/// Issue 33 item 5: URL-mode elicitation (MCP 2025-11-25) through `auth-agent mcp`, end to end: the
/// official MCP Python SDK as host (Tests/MCP/bridge_host.py --elicit-url) and FastMCP's
/// `connect_account` tool (Tests/MCP/server.py), which asks only a client that declared the mode,
/// sends the person to a page on another origin (`localhost`, where /mcp is on 127.0.0.1), waits for
/// the visit and says which `Authorization` each visit carried. The browser is the tests' fake
/// `xdg-open` on the PATH (it fetches the URL it is given), under a display (`DISPLAY`).
final class McpURLElicitationTests: XCTestCase {
    private static let shared = FastMCPServer.Shared()
    private static let stateless = FastMCPServer.Shared(environment: ["FASTMCP_REVISIONS": "stateless"])
    private var directory: URL!

    override class func tearDown() {
        shared.stop()
        stateless.stop()
        super.tearDown()
    }

    override func setUpWithError() throws {
        directory = try McpFastMCPTests.hostDirectory("auth-agent-mcp-elicit")
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    private var config: String { directory.appendingPathComponent("config.json").path }

    /// A client of this test's registered at `shared`'s server and configured; then the SDK's host,
    /// declaring URL elicitation or not, calls `connect_account` through a bridge.
    private func connect(_ host: String, mode: String = "legacy", at shared: FastMCPServer.Shared) throws -> (seen: JSONValue, server: FastMCPServer) {
        let server = try shared.server()
        let bin = directory.appendingPathComponent("bin").path
        _ = try McpFastMCPTests.python(["--register", server.baseURL, "--write-config", config, "--store", directory.appendingPathComponent("store").path,
                                        "--redirect-port", String(20_000 + Int.random(in: 0..<20_000))], bin: bin, timeout: 60)
        server.resetRequestLog()
        let seen = try McpFastMCPTests.python(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", mode,
                                               "--elicit-url", host], bin: bin, timeout: 90,
                                              environment: ["DISPLAY": ":0", "SSH_CONNECTION": "", "WAYLAND_DISPLAY": ""])
        return (seen, server)
    }

    func testAHostWithoutURLElicitationHasThePageOpenedByTheBridgeAndNoTokenGoesThere() throws {
        let (seen, server) = try connect("incapable", at: Self.shared)
        XCTAssertEqual(seen["connect"], "connected: 1 visit(s), Authorization [None]",
                       "the server saw URL mode declared, the bridge accepted and opened the page in the browser, which carried no token: \(seen)")
        XCTAssertEqual(seen["elicited"], [], "the host was never asked")
        XCTAssertFalse(seen["notifications"]?.arrayValue?.contains("notifications/elicitation/complete") ?? true,
                       "the completion of an elicitation the host never saw is not passed on: \(seen)")
        XCTAssertEqual(server.count("/_test/elicited"), 1, "one request to the page's origin, the browser's: \(server.requests())")
    }

    func testAHostThatDeclaredURLElicitationIsAskedItselfAndTold() throws {
        let (seen, _) = try connect("capable", at: Self.shared)
        XCTAssertEqual(seen["connect"], "connected: 1 visit(s), Authorization [None]", "\(seen)")
        XCTAssertEqual(seen["elicited"]?.arrayValue?.first?["mode"], "url", "passed through to the host: \(seen)")
        XCTAssertTrue(seen["notifications"]?.arrayValue?.contains("notifications/elicitation/complete") ?? false, "\(seen)")
    }

    func testAnOldHostBeforeAStatelessServerHasTheInputRequestOpenedByTheBridge() throws {
        let (seen, server) = try connect("incapable", at: Self.stateless)
        XCTAssertEqual(seen["connect"], "connected: 1 visit(s), Authorization [None]", "declared in the translated _meta, answered in the retry: \(seen)")
        XCTAssertEqual(seen["elicited"], [])
        XCTAssertEqual(server.count("/_test/elicited"), 1)
    }
}
