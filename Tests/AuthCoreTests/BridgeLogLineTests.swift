@testable import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 36 item 4: the bridge's log lines are sentences that say what failed, where, and what
/// happens next — never a Swift value (`AuthError(code: …)`, `Optional(…)`).
final class BridgeLogLineTests: XCTestCase {
    /// The server answers `initialize` and then goes away: its GET stream cannot be opened.
    func testTheGETStreamThatCannotBeOpenedSaysWhyAndWhatComesNext() async throws {
        let server = MCPBridgeAuthTests.Server { request in
            if request.method == "GET" { return HTTPResponse(status: 599) }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "Mcp-Session-Id": "s1"],
                                body: Array(#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#.utf8))
        }
        let gone = Unreachable(server: server)
        let lines = MCPBridgeAuthTests.Box<[String]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: gone, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               output: { _ in }, log: { line in lines.with { $0.append(line) } })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.utf8))
        for _ in 0..<100 where lines.with({ $0.count }) < 1 { try await Task.sleep(nanoseconds: 20_000_000) }
        await bridge.finish(grace: 0.1)
        let first = try XCTUnwrap(lines.with { $0.first })
        XCTAssertEqual(first, "mcp: the server's GET stream could not be opened: the MCP request was not completed: "
                       + "http://127.0.0.1:9 could not be reached; trying again in 1 s")
        for line in lines.with({ $0 }) { XCTAssertFalse(line.contains("AuthError(") || line.contains("Optional("), line) }
    }

    func testAnErrorBecomesAClauseOfTheLine() {
        XCTAssertEqual(MCPBridge.clause(AuthError.requestFailed(.mcpNotCompleted("http://127.0.0.1:9 could not be reached"))),
                       "the MCP request was not completed: http://127.0.0.1:9 could not be reached")
        XCTAssertEqual(MCPBridge.clause(HTTPTransportError.timedOut), "the request timed out")
        XCTAssertEqual(MCPBridge.clause(CancellationError()), "it was cancelled")
        XCTAssertEqual(MCPBridge.clause(AuthError(.requestFailed, "MCP said no.")), "MCP said no")
    }

    /// GETs fail as an unreachable server does; everything else goes to `server`.
    struct Unreachable: HTTPStreamingTransport {
        let server: MCPBridgeAuthTests.Server
        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            if request.method == "GET" { throw HTTPTransportError.unreachable("127.0.0.1:9") }
            return try await server.send(request)
        }
        func open(_ request: HTTPRequest) async throws -> HTTPStream { try await openWhole(request) }
    }
}
