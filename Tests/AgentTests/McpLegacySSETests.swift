import Foundation
import JSON
import XCTest

/// Issue 33 item 6, `auth-agent mcp --transport`: the deprecated HTTP+SSE transport of MCP
/// 2024-11-05 against FastMCP serving it (`transport="sse"`, Tests/MCP/server.py with
/// FASTMCP_TRANSPORT=sse) behind its own OAuth: the stream at GET /sse, messages POSTed to the
/// /messages/ endpoint its first event names, every request bearing the agent's token. The
/// official MCP Python SDK is the host.
final class McpLegacySSETests: FastMCPHostCase {
    private static let sse = FastMCPServer.Shared(environment: ["FASTMCP_TRANSPORT": "sse"])
    private static let foreign = FastMCPServer.Shared(environment: ["FASTMCP_TRANSPORT": "sse", "FASTMCP_SSE_ENDPOINT": "foreign"])

    override class func tearDown() {
        sse.stop()
        foreign.stop()
        super.tearDown()
    }

    private func host(_ server: FastMCPServer, config: String, mode: String = "legacy", quick: Bool = false, bridge: [String] = [],
                      environment: [String: String] = [:]) throws -> JSONValue {
        try run(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", mode]
                + (quick ? ["--quick"] : []) + bridge.map { "--bridge-arg=" + $0 }, environment: environment)
    }

    private func paths(_ server: FastMCPServer) -> [String] {
        server.requests().map { "\($0.method) \($0.path) \($0.status)" }
    }

    func testSSEOnlyServesTheSDKHostAfterOneLogin() throws {
        let server = try server(Self.sse)
        let seen = try host(server, config: config, bridge: ["--transport", "sse-only"])
        // Progress notifications and the elicitation (a server request, answered by a POST) came on the stream.
        assertServed(seen)
        let requests = paths(server)
        XCTAssertEqual(server.count("/authorize"), 1, "one login: \(requests)")
        // Nobody logged in: the configured provider's login before the first request, which is the stream.
        XCTAssertEqual(Array(requests.filter { !$0.hasPrefix("GET /authorize") && !$0.hasPrefix("POST /token") }.prefix(2)),
                       ["GET /sse 200", "POST /messages/ 202"], "the stream first, then messages to its endpoint, signed")
        XCTAssertFalse(requests.contains { $0.hasPrefix("POST /sse") }, "sse-only never POSTs to URL: \(requests)")
        XCTAssertFalse(requests.contains { $0.hasPrefix("POST /messages/") && !$0.hasSuffix(" 202") }, "\(requests)")

        // The SDK's 2026-07-28 host: its server/discover refused by the 2024-11-05 server, translated as
        // before a session server of Streamable HTTP (initialize once on the stream's session).
        server.resetRequestLog()
        let modern = try host(server, config: config, mode: "auto", bridge: ["--transport", "sse-only"])
        XCTAssertEqual(modern["protocolVersion"], "2026-07-28")
        assertServed(modern)
        XCTAssertEqual(server.count("/authorize") + server.count("/token"), 0, "the login kept: \(paths(server))")
    }

    /// mcp-remote's default, and the bridge's: Streamable HTTP first, the HTTP+SSE transport when URL
    /// answers the POST with 404/405. Here with a provider the agent learns from the stream's 401,
    /// which covers /sse: the endpoint under /messages/ is signed as URL is, on its origin.
    func testHTTPFirstFallsBackToTheSSETransportWithALearnedProvider() throws {
        let server = try Self.sse.server()
        let learning = directory.appendingPathComponent("learning.json").path
        let text = "{\"store\": {\"kind\": \"file\", \"path\": \"\(directory.path)/learned-store\"}, \"providers\": []}"
        XCTAssertTrue(FileManager.default.createFile(atPath: learning, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
        // A display, so that the learned provider's login opens the "browser" (bin/xdg-open) at once.
        let seen = try host(server, config: learning, quick: true, environment: ["DISPLAY": ":99"])
        XCTAssertEqual(seen["echo"], "hi", "\(seen)")
        let requests = paths(server)
        XCTAssertEqual(requests.first, "POST /sse 405", "Streamable HTTP first: \(requests)")
        XCTAssertTrue(requests.contains("GET /sse 200"), "\(requests)")
        XCTAssertEqual(server.count("/authorize"), 1, "\(requests)")
        XCTAssertEqual(requests.filter { $0.hasPrefix("POST /messages/") }.count, server.count("/messages/"), "\(requests)")
        XCTAssertFalse(requests.contains { $0.hasPrefix("POST /messages/") && !$0.hasSuffix(" 202") }, "every message signed and taken: \(requests)")
    }

    func testAnEndpointOnAnotherOriginIsRefusedWithAClearError() throws {
        let server = try server(Self.foreign)
        let agent = try AgentProcess(arguments: ["mcp", server.mcpURL, "--transport", "sse-only", "--config", config],
                                     environment: ["PATH": directory.appendingPathComponent("bin").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")])
        try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#)
        let line = try XCTUnwrap(agent.nextLine(timeout: 60), "no answer; stderr:\n\(agent.stderr)")
        let answer = try JSONParser.parse([UInt8](line))
        let message = answer["error"]?["message"]?.stringValue ?? ""
        XCTAssertEqual(answer["id"], 1)
        XCTAssertTrue(message.contains("named http://localhost:\(server.info["port"]?.intValue ?? 0)/messages/"), message)
        XCTAssertTrue(message.contains("which is not on \(server.baseURL): refused, the agent's tokens go to \(server.baseURL) only"), message)
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0)
        XCTAssertEqual(server.count("/messages/"), 0, "nothing sent to the other origin (which is this server under another name): \(paths(server))")
    }
}
