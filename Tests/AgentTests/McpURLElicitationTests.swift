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
    private static let session = FastMCPServer.Shared(environment: ["FASTMCP_REVISIONS": "session"])
    private var directory: URL!

    override class func tearDown() {
        shared.stop()
        stateless.stop()
        session.stop()
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
    /// The bridge's stderr, kept by the wrapper `connect` runs it through.
    private var stderr: String { (try? String(contentsOf: directory.appendingPathComponent("stderr"), encoding: .utf8)) ?? "" }

    private func connect(_ host: String, mode: String = "legacy", at shared: FastMCPServer.Shared,
                         display: String = ":0") throws -> (seen: JSONValue, server: FastMCPServer) {
        let server = try shared.server()
        let bin = directory.appendingPathComponent("bin").path
        _ = try McpFastMCPTests.python(["--register", server.baseURL, "--write-config", config, "--store", directory.appendingPathComponent("store").path,
                                        "--redirect-port", String(20_000 + Int.random(in: 0..<20_000))], bin: bin, timeout: 60)
        server.resetRequestLog()
        let bridge = directory.appendingPathComponent("bridge").path
        let script = "#!/bin/sh\nexec '\(AgentProcess.binaryURL.path)' \"$@\" 2>>'\(directory.appendingPathComponent("stderr").path)'\n"
        _ = FileManager.default.createFile(atPath: bridge, contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
        let seen = try McpFastMCPTests.python(["--bridge", bridge, "--url", server.mcpURL, "--config", config, "--mode", mode,
                                               "--elicit-url", host], bin: bin, timeout: 90,
                                              environment: ["DISPLAY": display, "SSH_CONNECTION": "", "WAYLAND_DISPLAY": ""])
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

    #if os(Linux)
    func testWithoutADisplayThePageIsShownOnStderrAndTheServerToldCancel() throws {
        // No display: the configured login still opens its browser (the provider's openBrowser), the page does not.
        let (seen, server) = try connect("incapable", at: Self.shared, display: "")
        XCTAssertEqual(seen["connect"], "not connected (cancel)", "\(seen)\n\(stderr)")
        XCTAssertEqual(server.count("/_test/elicited"), 0, "nobody opened it")
        let shown = stderr
        XCTAssertTrue(shown.contains("asks you to open a page at http://localhost:"), shown)
        XCTAssertTrue(shown.contains("/_test/elicited?id="), "the full URL: \(shown)")
        XCTAssertTrue(shown.contains("Connect your account"), "the server's message: \(shown)")
        XCTAssertTrue(shown.contains("No browser can be opened here"), shown)
    }
    #endif

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

    func testAStatelessHostBeforeASessionServerHasTheStreamsElicitationOpenedByTheBridge() throws {
        let (seen, server) = try connect("incapable", mode: "auto", at: Self.session)
        XCTAssertEqual(seen["connect"], "connected: 1 visit(s), Authorization [None]", "declared in the initialize the bridge runs: \(seen)")
        XCTAssertEqual(seen["elicited"], [])
        XCTAssertFalse(seen["notifications"]?.arrayValue?.contains("notifications/elicitation/complete") ?? true, "\(seen)")
        XCTAssertEqual(server.count("/_test/elicited"), 1)
    }
}
