@testable import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 33 item 6, `--transport`: the HTTP+SSE transport of MCP 2024-11-05 (the `endpoint` event,
/// messages POSTed there and answered on the stream) and mcp-remote's fallback rule — the pure
/// pieces, then the bridge against a scripted server whose event stream the test holds.
final class MCPLegacySSETests: XCTestCase {
    typealias Box = MCPBridgeAuthTests.Box

    func testTheEndpointEventResolvesOnTheStreamsOriginOnly() {
        let url = "http://127.0.0.1:8000/sse"
        func endpoint(_ data: String) -> Result<String, AuthError> { MCPLegacySSE.endpoint(Array(data.utf8), from: url) }
        XCTAssertEqual(try endpoint("/messages/?session_id=ab12").get(), "http://127.0.0.1:8000/messages/?session_id=ab12")
        XCTAssertEqual(try endpoint("messages?session_id=1").get(), "http://127.0.0.1:8000/messages?session_id=1", "relative to URL's path")
        XCTAssertEqual(try endpoint(" http://127.0.0.1:8000/m?x=1\t").get(), "http://127.0.0.1:8000/m?x=1", "absolute on the same origin")
        for foreign in ["http://localhost:8000/messages", "https://127.0.0.1:8000/messages", "http://127.0.0.1:8001/messages",
                        "//evil.example/messages", "http://127.0.0.1:8000@evil.example/messages"] {
            guard case .failure(let error) = endpoint(foreign) else { XCTFail("\(foreign) accepted"); continue }
            XCTAssertEqual(error.code, .requestFailed)
            XCTAssertTrue(error.message.contains("which is not on http://127.0.0.1:8000: refused"), error.message)
        }
        guard case .failure(let empty) = endpoint("  ") else { return XCTFail("an empty endpoint accepted") }
        XCTAssertTrue(empty.message.contains("endpoint event was empty"), empty.message)
    }

    func testTheFallbackRuleIsMcpRemotes() {
        for strategy in MCPTransport.allCases {
            for status in [200, 202, 400, 401, 403, 404, 405, 406, 500] {
                let first = strategy == .httpFirst || strategy == .sseFirst
                XCTAssertEqual(strategy.fallsBack(after: status), first && (status == 404 || status == 405), "\(strategy) \(status)")
            }
        }
        XCTAssertEqual(MCPTransport.httpOnly.settled, .streamableHTTP)
        XCTAssertEqual(MCPTransport.sseOnly.settled, .sse)
        XCTAssertNil(MCPTransport.httpFirst.settled)
        XCTAssertNil(MCPTransport.sseFirst.settled)
        XCTAssertEqual(MCPBridge.Options().transport, .httpFirst, "mcp-remote's default")
    }

    /// A 2024-11-05 server: GET opens a stream (its first event the endpoint), each POST to the
    /// endpoint is answered 202 and its answer (`reply`; nil: none) goes on the latest stream.
    final class Server: HTTPStreamingTransport, @unchecked Sendable {
        let requests = Box<[HTTPRequest]>([])
        let streams = Box<[AsyncThrowingStream<[UInt8], Error>.Continuation]>([])
        let postStatus: Int
        /// The GET's status: 200 opens a stream, anything else refuses it.
        let getStatus: Int
        /// Before the endpoint's path: "" for a relative endpoint, an origin for an absolute one.
        let endpointOrigin: String
        let reply: @Sendable (JSONValue) -> JSONValue?

        init(postStatus: Int = 404, getStatus: Int = 200, endpointOrigin: String = "", reply: @escaping @Sendable (JSONValue) -> JSONValue?) {
            self.postStatus = postStatus
            self.getStatus = getStatus
            self.endpointOrigin = endpointOrigin
            self.reply = reply
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse { throw HTTPTransportError.unreachable("the connection broke") }

        func open(_ request: HTTPRequest) async throws -> HTTPStream {
            requests.with { $0.append(request) }
            let (body, continuation) = AsyncThrowingStream<[UInt8], Error>.makeStream()
            if request.method == "GET", getStatus != 200 {
                continuation.finish()
                return HTTPStream(status: getStatus, headers: [:], body: body)
            }
            if request.method == "GET" {
                let n = streams.with { $0.append(continuation); return $0.count }
                continuation.yield(Array("event: endpoint\r\ndata: \(endpointOrigin)/messages/?session_id=s\(n)\r\n\r\n".utf8))
                return HTTPStream(status: 200, headers: ["content-type": "text/event-stream"], body: body)
            }
            guard request.url.contains("/messages/") else {
                // Streamable HTTP at URL: the answer as JSON when the POST is taken.
                if postStatus == 200, let message = try? JSONParser.parse(request.body ?? []), let answer = reply(message) {
                    continuation.yield(JSONSerializer.bytes(answer))
                }
                continuation.finish()
                return HTTPStream(status: postStatus, headers: ["content-type": "application/json"], body: body)
            }
            continuation.finish()
            if let message = try? JSONParser.parse(request.body ?? []), let answer = reply(message), let stream = streams.with({ $0.last }) {
                stream.yield(Array("event: message\ndata: ".utf8) + JSONSerializer.bytes(answer) + Array("\n\n".utf8))
            }
            return HTTPStream(status: 202, headers: [:], body: body)
        }

        /// The stream breaks off (the server restarted, a proxy cut it).
        func breakStream() { streams.with { $0.last }?.finish(throwing: HTTPTransportError.unreachable("the connection broke")) }
    }

    private static func answering(_ message: JSONValue) -> JSONValue? {
        guard let id = message["id"] else { return nil }
        switch message["method"]?.stringValue {
        case "initialize": return ["jsonrpc": "2.0", "id": id, "result": ["protocolVersion": "2024-11-05", "capabilities": [:]]]
        case "tools/call" where message["params"]?["name"] == "hang": return nil
        default: return ["jsonrpc": "2.0", "id": id, "result": ["echo": message["params"] ?? .null]]
        }
    }

    private func waitUntil(_ condition: () -> Bool) async {
        for _ in 0..<500 where !condition() { try? await Task.sleep(nanoseconds: 10_000_000) }
    }

    func testHTTPFirstFallsBackAfter405AndABrokenStreamAnswersEachPendingRequestOnceThenANewSessionIsInitialized() async throws {
        let server = Server(postStatus: 405, reply: Self.answering)
        let output = Box<[JSONValue]>([])
        let logs = Box<[String]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/sse", transport: server, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               output: { line in output.with { $0.append((try? JSONParser.parse(line)) ?? .null) } },
                               log: { line in logs.with { $0.append(line) } })
        func send(_ line: String) { bridge.receive(line: Array(line.utf8)) }
        func answers(_ id: JSONValue) -> [JSONValue] { output.with { $0 }.filter { $0["id"] == id } }
        send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}"#)
        send(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        send(#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}"#)
        await waitUntil { answers(2).count == 1 }
        XCTAssertEqual(answers(1).first?["result"]?["protocolVersion"], "2024-11-05")
        XCTAssertEqual(answers(2).first?["result"]?["echo"]?["name"], "echo")
        let first = server.requests.with { $0 }
        XCTAssertEqual(first.map { "\($0.method) \($0.url)" }.prefix(3), ["POST http://127.0.0.1:9/sse", "GET http://127.0.0.1:9/sse",
                                                                          "POST http://127.0.0.1:9/messages/?session_id=s1"])
        XCTAssertEqual(first[1].header("accept"), "text/event-stream")
        for request in first { XCTAssertEqual(request.header("authorization"), "Bearer t", "\(request.method) \(request.url)") }

        send(#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hang"}}"#)
        send(#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hang"}}"#)
        await waitUntil { server.requests.with { $0.count } == first.count + 2 }
        server.breakStream()
        await waitUntil { answers(3).count + answers(4).count == 2 }
        for id: JSONValue in [3, 4] {
            XCTAssertEqual(answers(id).count, 1, "exactly one answer")
            XCTAssertTrue(answers(id).first?["error"]?["message"]?.stringValue?.contains("stream ended before the answer") == true, "\(answers(id))")
        }
        XCTAssertTrue(logs.with { $0 }.contains { $0.contains("HTTP+SSE stream ended") && $0.contains("the next message opens a new one") }, "\(logs.with { $0 })")

        // The next message opens a new stream, a new session at the server: the host's initialize is replayed first.
        send(#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"again"}}"#)
        await waitUntil { answers(5).count == 1 }
        XCTAssertEqual(answers(5).first?["result"]?["echo"]?["name"], "again")
        let later = server.requests.with { $0 }.dropFirst(first.count + 2).map { request -> String in
            let message = (try? JSONParser.parse(request.body ?? [])) ?? .null
            return "\(request.method) \(request.url.replacingOccurrences(of: "http://127.0.0.1:9", with: "")) \(message["method"]?.stringValue ?? "")"
        }
        XCTAssertEqual(later, ["GET /sse ", "POST /messages/?session_id=s2 initialize", "POST /messages/?session_id=s2 notifications/initialized",
                               "POST /messages/?session_id=s2 tools/call"])
        await bridge.finish(grace: 1)
        XCTAssertEqual(output.with { $0 }.count, 5, "the replayed initialize's answer is the bridge's: \(output.with { $0 })")
    }

    func testSSEOnlyNeverPostsToURLAndAnEndpointElsewhereIsRefusedBeforeAnythingIsSent() async throws {
        let server = Server(reply: Self.answering)
        let output = Box<[JSONValue]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/sse", transport: server, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               options: .init(transport: .sseOnly), output: { line in output.with { $0.append((try? JSONParser.parse(line)) ?? .null) } },
                               log: { _ in })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#.utf8))
        await bridge.finish(grace: 2)
        XCTAssertEqual(server.requests.with { $0 }.map(\.method), ["GET", "POST"])
        XCTAssertEqual(output.with { $0 }.first?["result"]?["echo"]?["name"], "x")

        let foreign = Server(endpointOrigin: "http://127.0.0.1:9", reply: Self.answering)
        let refused = Box<[JSONValue]>([])
        let elsewhere = MCPBridge(url: "http://localhost:9/sse", transport: foreign, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                                  options: .init(transport: .sseOnly), output: { line in refused.with { $0.append((try? JSONParser.parse(line)) ?? .null) } },
                                  log: { _ in })
        elsewhere.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#.utf8))
        await elsewhere.finish(grace: 2)
        XCTAssertEqual(foreign.requests.with { $0 }.map(\.method), ["GET"], "nothing posted to 127.0.0.1 for localhost's token")
        XCTAssertEqual(refused.with { $0 }.count, 1)
        XCTAssertTrue(refused.with { $0 }.first?["error"]?["message"]?.stringValue?.contains("which is not on http://localhost:9: refused") == true,
                      "\(refused.with { $0 })")
    }

    func testSSEFirstSettlesOnStreamableHTTPWhenTheGETAnswers404() async throws {
        let server = Server(postStatus: 200, getStatus: 404, reply: Self.answering)
        let output = Box<[JSONValue]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: server, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               options: .init(transport: .sseFirst), output: { line in output.with { $0.append((try? JSONParser.parse(line)) ?? .null) } },
                               log: { _ in })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}"#.utf8))
        await waitUntil { output.with { $0.count } == 1 }
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b"}}"#.utf8))
        await bridge.finish(grace: 2)
        XCTAssertEqual(server.requests.with { $0 }.map(\.method), ["GET", "POST", "POST"], "one GET, then Streamable HTTP for good")
        XCTAssertEqual(output.with { $0 }.compactMap { $0["result"]?["echo"]?["name"]?.stringValue }, ["a", "b"])
    }

    func testEachPOSTIsSignedForTheEndpointAndAnUnansweredRequestTimesOut() async throws {
        let server = Server(reply: Self.answering)
        let logins = MCPBridgeAuthTests.Logins(token: "t")
        let output = Box<[JSONValue]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/sse", transport: server, authorizer: logins, options: .init(timeout: 0.3, transport: .sseOnly),
                               output: { line in output.with { $0.append((try? JSONParser.parse(line)) ?? .null) } }, log: { _ in })
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hang"}}"#.utf8))
        await waitUntil { output.with { $0.count } == 1 }
        XCTAssertTrue(output.with { $0 }.first?["error"]?["message"]?.stringValue?.contains("did not answer within the timeout") == true, "\(output.with { $0 })")
        XCTAssertEqual(logins.targets.with { $0 }, ["GET http://127.0.0.1:9/sse", "POST http://127.0.0.1:9/messages/?session_id=s1"],
                       "a proof names the request's own URL; the provider is URL's")
        await bridge.finish(grace: 1)
        XCTAssertEqual(output.with { $0 }.count, 1)
    }
}
