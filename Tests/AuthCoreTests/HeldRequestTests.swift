@testable import AuthCore
import Foundation
import JSON
import XCTest

/// A stateless host before a session server: a server request on a tool call's stream is turned into
/// an `input_required` answer to the host, the stream held until the host retries. Every request of
/// the host still gets exactly one answer — the held one included, when the host never retries — and
/// a cancellation of the retry reaches the server under the id the server knows. A server request
/// outside any request's stream (on the GET stream) has nowhere to go in that revision: the bridge
/// answers it for the host.
final class HeldRequestTests: XCTestCase {
    typealias Box = MCPBridgeAuthTests.Box
    static let meta = #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#

    /// A session server whose `tools/call` streams an elicitation, then its answer.
    static func server(_ request: HTTPRequest) -> HTTPResponse {
        let body = (try? JSONParser.parse(request.body ?? [])) ?? .null
        guard body["method"] == "tools/call", let id = body["id"] else { return RevisionTranslationTests.sessionServer(request) }
        let ask: JSONValue = ["jsonrpc": "2.0", "id": 100, "method": "elicitation/create", "params": ["message": "Name?", "requestedSchema": ["type": "object"]]]
        let done: JSONValue = ["jsonrpc": "2.0", "id": id, "result": ["content": [["type": "text", "text": "done"]]]]
        let events = [ask, done].map { "event: message\ndata: \(JSONSerializer.string($0))\n\n" }.joined()
        return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Array(events.utf8))
    }

    func testAHeldRequestTheHostNeverRetriesIsAnsweredOnce() async throws {
        let output = Box<[JSONValue]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: MCPBridgeAuthTests.Server(answer: Self.server),
                               authorizer: MCPBridgeAuthTests.Logins(token: "t"), options: .init(timeout: 1),
                               output: { line in if let value = try? JSONParser.parse(line) { output.with { $0.append(value) } } }, log: { _ in })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{\#(Self.meta)}}"#.utf8))
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask",\#(Self.meta)}}"#.utf8))
        for _ in 0..<300 where !output.with({ $0.contains { $0["id"] == 5 } }) { try? await Task.sleep(nanoseconds: 10_000_000) }
        XCTAssertEqual(output.with { $0 }.first { $0["id"] == 5 }?["result"]?["resultType"], "input_required")
        // The host goes without retrying; the held stream ends after the bridge's timeout.
        await bridge.finish(grace: 2)
        let answers = output.with { $0 }.filter { $0["id"] == 5 }
        XCTAssertEqual(answers.count, 1, "one answer for request 5: \(answers)")
    }

    func testACancelledRetryReachesTheServerUnderTheHeldRequestsId() {
        XCTAssertEqual(RevisionTranslation.cancellation(["jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["requestId": 6]],
                                                        answeredAs: [5: 6]),
                       ["jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["requestId": 5]])
        let other: JSONValue = ["jsonrpc": "2.0", "method": "notifications/cancelled", "params": ["requestId": 7]]
        XCTAssertEqual(RevisionTranslation.cancellation(other, answeredAs: [5: 6]), other)
    }

    func testAServerRequestOnTheGETStreamIsAnsweredForAStatelessHost() async throws {
        let output = Box<[JSONValue]>([])
        let posted = Box<[JSONValue]>([])
        let listened = Box(0)
        let server = MCPBridgeAuthTests.Server { request in
            if request.method == "GET" {
                guard listened.with({ $0 += 1; return $0 }) == 1 else { return HTTPResponse(status: 405) }
                let ask: JSONValue = ["jsonrpc": "2.0", "id": 200, "method": "roots/list"]
                let note: JSONValue = ["jsonrpc": "2.0", "method": "notifications/tools/list_changed"]
                let events = [ask, note].map { "event: message\ndata: \(JSONSerializer.string($0))\n\n" }.joined()
                return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Array(events.utf8))
            }
            if let body = try? JSONParser.parse(request.body ?? []) { posted.with { $0.append(body) } }
            return RevisionTranslationTests.sessionServer(request)
        }
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: server, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               output: { line in if let value = try? JSONParser.parse(line) { output.with { $0.append(value) } } }, log: { _ in })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{\#(Self.meta)}}"#.utf8))
        for _ in 0..<300 where !posted.with({ $0.contains { $0["id"] == 200 } }) { try? await Task.sleep(nanoseconds: 10_000_000) }
        await bridge.finish(grace: 1)
        XCTAssertFalse(output.with { $0 }.contains { $0["method"] == "roots/list" }, "a stateless host takes no server request outside a request: \(output.with { $0 })")
        XCTAssertEqual(posted.with { $0 }.first { $0["id"] == 200 }?["error"]?["code"], -32601, "the bridge answers it for the host: \(posted.with { $0 })")
        XCTAssertTrue(output.with { $0 }.contains { $0["method"] == "notifications/tools/list_changed" }, "notifications go on")
    }
}
