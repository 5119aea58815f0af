import Foundation
import JSON
import XCTest

/// Issue 33 item 1: `auth-agent mcp` between a host and a server of different MCP revisions —
/// the official MCP Python SDK as host (2025-11-25 `legacy`, 2026-07-28 `auto`) and as server
/// (FastMCP, made one-era by Tests/MCP/server.py's FASTMCP_REVISIONS, since the SDK serves both),
/// plus Tests/MCP/old_host.py for 2025-06-18, which the SDK cannot offer. Each pairing checks
/// what the host sees is its own revision's stream, after a real login.
final class McpRevisionsTests: FastMCPHostCase {
    private static let stateless = FastMCPServer.Shared(environment: ["FASTMCP_REVISIONS": "stateless"])
    private static let session = FastMCPServer.Shared(environment: ["FASTMCP_REVISIONS": "session"])

    override class func tearDown() {
        stateless.stop()
        session.stop()
        super.tearDown()
    }

    /// The SDK's host in `mode` through a bridge to `server`; its one JSON line.
    private func sdkHost(_ mode: String, _ server: FastMCPServer, bridge: [String] = []) throws -> JSONValue {
        try run(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", mode]
                + bridge.map { "--bridge-arg=" + $0 })
    }

    /// The SDK's host in `mode` through a bridge to `server`: it speaks `revision` and is served everything.
    @discardableResult
    private func assertSDKHost(_ mode: String, at revision: String, _ server: FastMCPServer, bridge: [String] = [], line: UInt = #line) throws -> JSONValue {
        let seen = try sdkHost(mode, server, bridge: bridge)
        XCTAssertEqual(seen["protocolVersion"], .string(revision), line: line)
        assertServed(seen, line: line)
        return seen
    }

    func testSessionHostsBeforeAStatelessServer() throws {
        let server = try server(Self.stateless)
        // The SDK's 2025-11-25 host: initialize answered by the bridge from server/discover, the
        // elicitation of a multi-round-trip result asked of the host as a server-to-host request.
        try assertSDKHost("legacy", at: "2025-11-25", server)
        XCTAssertEqual(server.count("/authorize"), 1, "one login")
        XCTAssertEqual(server.count("/mcp", method: "GET") + server.count("/mcp", method: "DELETE"), 0, "no session, no stream: \(server.requests())")

        // 2025-06-18, which the SDK cannot offer: a host of the test's own, its whole stream checked.
        let old = try run(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config], script: "old_host.py")
        XCTAssertEqual(old["protocolVersion"], "2025-06-18")
        XCTAssertEqual(old["serverInfo"]?["name"], "auth-agent-test")
        XCTAssertEqual(old["tools"], ["add", "ask_name", "connect_account", "count", "echo"])
        XCTAssertEqual(old["echo"], "hi")
        XCTAssertEqual(old["elicited"], "What is your name?")
        XCTAssertEqual(old["ask_name"], "Hello, Ada!")
        XCTAssertEqual(old["ping"], [:])
        for message in old["messages"]?.arrayValue ?? [] {
            XCTAssertEqual(message["jsonrpc"], "2.0", "\(message)")
            XCTAssertNil(message["result"]?["resultType"], "no 2026 field reaches a 2025 host: \(message)")
            XCTAssertNil(message["result"]?["ttlMs"], "\(message)")
        }

        // The SDK's 2026-07-28 host: the same revision, passed through.
        try assertSDKHost("auto", at: "2026-07-28", server)
    }

    func testStatelessHostsBeforeASessionServer() throws {
        let server = try server(Self.session)
        // The SDK's 2026-07-28 host: server/discover answered from the bridge's initialize, every
        // result with the resultType and cache hints the SDK's client insists on, and the server's
        // elicitation (a request on the tool call's stream) as an input_required result.
        try assertSDKHost("auto", at: "2026-07-28", server)
        XCTAssertEqual(server.count("/authorize"), 1, "one login")
        XCTAssertEqual(server.count("/mcp", method: "DELETE"), 1, "the bridge's session ended at exit: \(server.requests())")

        // The SDK's 2025-11-25 host: the same revision, passed through.
        try assertSDKHost("legacy", at: "2025-11-25", server)
    }

    func testProtocolVersionPinsTheRevisionOfferedToAServerOfBoth() throws {
        let server = try server(Self.stateless)
        // A 2025-11-25 host pinned to 2026-07-28: translated although the revision it asks would be refused
        // anyway — the same exchange as without the pin, minus the refused initialize.
        try assertSDKHost("legacy", at: "2025-11-25", server, bridge: ["--protocol-version", "2026-07-28"])
        XCTAssertFalse(server.requests().contains { $0.path == "/mcp" && $0.status == 400 }, "no initialize offered: \(server.requests())")
    }
}
