@testable import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 33 item 5: URL-mode elicitation (MCP 2025-11-25) — the decision (host capable or not: pass
/// through or open here) and what the bridge declares, then the bridge against scripted servers in
/// each revision pairing it stands between.
final class URLElicitationTests: XCTestCase {
    typealias Box = MCPBridgeAuthTests.Box
    typealias Seen = RevisionTranslationTests.Seen

    static let page = "https://pay.example.com/checkout?e=el-1"
    static let urlRequest: JSONValue = ["jsonrpc": "2.0", "id": "e1", "method": "elicitation/create",
                                        "params": ["mode": "url", "message": "Pay to continue", "url": .string(page), "elicitationId": "el-1"]]
    static let completion: JSONValue = ["jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": ["elicitationId": "el-1"]]

    // MARK: The rules

    func testOnlyAnExplicitURLModeDeclaresIt() {
        XCTAssertFalse(URLElicitation.declared(in: nil))
        XCTAssertFalse(URLElicitation.declared(in: [:]))
        XCTAssertFalse(URLElicitation.declared(in: ["elicitation": [:]]), "an empty elicitation is form mode only")
        XCTAssertFalse(URLElicitation.declared(in: ["elicitation": ["form": [:]]]))
        XCTAssertTrue(URLElicitation.declared(in: ["elicitation": ["url": [:]]]))
        XCTAssertTrue(URLElicitation.declared(in: ["elicitation": ["form": [:], "url": [:]]]))
    }

    func testAURLElicitationIsTheHostsWhenItDeclaredTheModeElseTheBridges() {
        let form: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": ["message": "Name?", "requestedSchema": ["type": "object"]]]
        let answer: JSONValue = ["jsonrpc": "2.0", "id": 3, "result": [:]]
        XCTAssertEqual(URLElicitation.handling(Self.urlRequest, hostOpensURLs: true), .passThrough)
        XCTAssertEqual(URLElicitation.handling(Self.completion, hostOpensURLs: true), .passThrough)
        XCTAssertEqual(URLElicitation.handling(Self.urlRequest, hostOpensURLs: false), .openHere)
        XCTAssertEqual(URLElicitation.handling(Self.completion, hostOpensURLs: false), .dropCompletion)
        XCTAssertEqual(URLElicitation.handling(form, hostOpensURLs: false), .passThrough, "form mode is the host's")
        XCTAssertEqual(URLElicitation.handling(answer, hostOpensURLs: false), .passThrough)
        let required = try? XCTUnwrap(URLElicitation(id: .null, params: Self.urlRequest["params"]))
        XCTAssertEqual(URLElicitation.handling(Self.requiredError(1), hostOpensURLs: false), .openBeforeRetry(required.map { [$0] } ?? []))
        XCTAssertEqual(URLElicitation.handling(Self.requiredError(1), hostOpensURLs: true), .passThrough)
        XCTAssertEqual(URLElicitation.handling(MCPMessage.error(id: 1, code: -32602, message: "Invalid params"), hostOpensURLs: false), .passThrough)
    }

    /// MCP 2025-11-25's `URLElicitationRequiredError` answering the request `id`.
    static func requiredError(_ id: JSONValue) -> JSONValue {
        MCPMessage.error(id: id, code: URLElicitation.requiredErrorCode, message: "This request requires more information.",
                         data: ["elicitations": [urlRequest["params"]!]])
    }

    func testTheBridgeDeclaresURLModeBesideWhatTheHostDeclared() {
        XCTAssertEqual(URLElicitation.declaring([:]), ["elicitation": ["url": [:]]])
        XCTAssertEqual(URLElicitation.declaring(["elicitation": [:]]), ["elicitation": ["form": [:], "url": [:]]], "form mode kept")
        XCTAssertEqual(URLElicitation.declaring(["sampling": [:], "elicitation": ["form": [:]]]), ["sampling": [:], "elicitation": ["form": [:], "url": [:]]])
        let capable: JSONValue = ["elicitation": ["form": [:], "url": ["x": 1]]]
        XCTAssertEqual(URLElicitation.declaring(capable), capable)

        func initialize(_ version: String, _ capabilities: JSONValue) -> JSONValue {
            ["jsonrpc": "2.0", "id": 0, "method": "initialize", "params": ["protocolVersion": .string(version), "capabilities": capabilities]]
        }
        XCTAssertEqual(URLElicitation.declaringInInitialize(initialize("2025-06-18", [:])), initialize("2025-06-18", [:]), "no URL mode before 2025-11-25")
        XCTAssertEqual(URLElicitation.declaringInInitialize(initialize("2025-11-25", [:])), initialize("2025-11-25", ["elicitation": ["url": [:]]]))
        XCTAssertEqual(URLElicitation.declaringInInitialize(initialize("2025-11-25", capable)), initialize("2025-11-25", capable))
    }

    func testTheAnswerAndTheURLsTheAgentRefuses() throws {
        let elicitation = try XCTUnwrap(URLElicitation(request: Self.urlRequest))
        XCTAssertEqual(elicitation.elicitationId, "el-1")
        XCTAssertNil(elicitation.problem)
        XCTAssertEqual(elicitation.answer(.accept), ["jsonrpc": "2.0", "id": "e1", "result": ["action": "accept"]])
        for refused in ["", "file:///etc/passwd", "javascript:alert(1)", "http://pay.example.com/", "https://user:pw@pay.example.com/"] {
            XCTAssertNotNil(URLElicitation(id: 1, params: ["mode": "url", "url": .string(refused)])?.problem, refused)
        }
        XCTAssertNil(URLElicitation(id: 1, params: ["message": "Name?"]), "form mode")
    }

    // MARK: The bridge

    /// A session server whose `tools/call` answers on an event stream: a URL elicitation, its
    /// completion, then the result (a scripted stream sends it whole; a real server waits for the answer).
    static func sessionServer(_ request: HTTPRequest) -> HTTPResponse {
        let body = Seen(request: request).body
        guard request.method == "POST", body["method"] == "tools/call" else { return RevisionTranslationTests.sessionServer(request) }
        let result: JSONValue = ["jsonrpc": "2.0", "id": body["id"] ?? .null, "result": ["content": [["type": "text", "text": "done"]]]]
        let events = [urlRequest, completion, result].map { "event: message\ndata: \(JSONSerializer.string($0))\n\n" }.joined()
        return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Array(events.utf8))
    }

    /// A 2026-07-28 server whose `tools/call` asks for the URL elicitation as an input request, and answers the retry with its action.
    static func statelessServer(_ request: HTTPRequest) -> HTTPResponse {
        let body = Seen(request: request).body
        guard request.method == "POST", body["method"] == "tools/call", request.header("mcp-protocol-version") == MCPMessage.statelessRevision else {
            return RevisionTranslationTests.statelessServer(request)
        }
        let result: JSONValue
        if let action = body["params"]?["inputResponses"]?["pay"]?["action"]?.stringValue {
            result = ["content": [["type": "text", "text": .string("paid: \(action)")]], "resultType": "complete"]
        } else {
            result = ["resultType": "input_required", "requestState": "s1", "inputRequests": ["pay": ["method": "elicitation/create", "params": urlRequest["params"]!]]]
        }
        return RevisionTranslationTests.json(["jsonrpc": "2.0", "id": body["id"] ?? .null, "result": result])
    }

    struct Run {
        var host: [JSONValue]
        var server: [Seen]
        var opened: [String]
        /// The bridge's own answer to the server's elicitation, when it gave one.
        var answered: JSONValue? { server.first { $0.body["id"] == "e1" && $0.body["result"] != nil }?.body["result"] }
    }

    private func run(_ lines: [String], server: @escaping @Sendable (HTTPRequest) -> HTTPResponse, browser: Bool = true,
                     answerAwaited: Bool = false) async -> Run {
        let seen = Box<[Seen]>([])
        let output = Box<[JSONValue]>([])
        let opened = Box<[String]>([])
        let transport = MCPBridgeAuthTests.Server { request in
            seen.with { $0.append(Seen(request: request)) }
            return server(request)
        }
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: transport, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               output: { line in if let value = try? JSONParser.parse(line) { output.with { $0.append(value) } } },
                               log: { _ in }, openURL: { elicitation in opened.with { $0.append(elicitation.url) }; return browser })
        for line in lines { bridge.receive(line: Array(line.utf8)) }
        let requests = lines.filter { (try? JSONParser.parse(Array($0.utf8)))?["id"] != nil }.count
        for _ in 0..<500 {
            let answers = output.with { $0.filter { $0["method"] == nil }.count }
            let answered = !answerAwaited || seen.with { $0.contains { $0.body["id"] == "e1" && $0.body["result"] != nil } }
            if answers >= requests && answered { break }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        await bridge.finish(grace: 2)
        return Run(host: output.with { $0 }, server: seen.with { $0 }, opened: opened.with { $0 })
    }

    static func sessionHost(_ capabilities: String) -> [String] {
        [#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":"# + capabilities + #","clientInfo":{"name":"h","version":"1"}}}"#,
         #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
         #"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay","arguments":{}}}"#]
    }

    func testAHostWithoutURLModeHasTheURLOpenedByTheBridgeAndNeverSeesIt() async throws {
        let run = await run(Self.sessionHost(#"{"elicitation":{}}"#), server: Self.sessionServer, answerAwaited: true)
        XCTAssertEqual(run.opened, [Self.page])
        XCTAssertEqual(run.answered, ["action": "accept"], "\(run.server.map { $0.body })")
        XCTAssertFalse(run.host.contains { $0["method"] != nil }, "neither the elicitation nor its completion reach the host: \(run.host)")
        XCTAssertEqual(run.host.first { $0["id"] == 1 }?["result"]?["content"]?.arrayValue?.first?["text"], "done")
        let initialize = try XCTUnwrap(run.server.first { $0.body["method"] == "initialize" })
        XCTAssertEqual(initialize.body["params"]?["capabilities"], ["elicitation": ["form": [:], "url": [:]]], "URL mode declared in the host's stead")
        XCTAssertTrue(run.server.allSatisfy { $0.request.url == "http://127.0.0.1:9/mcp" }, "nothing requested from the page's origin")
    }

    func testAHostThatDeclaredURLModeGetsItAsItCame() async throws {
        let lines = Self.sessionHost(#"{"elicitation":{"form":{},"url":{}}}"#)
        let run = await run(lines, server: Self.sessionServer)
        XCTAssertEqual(run.opened, [])
        XCTAssertNil(run.answered, "the host answers it")
        XCTAssertEqual(run.host.first { $0["method"] == "elicitation/create" }, Self.urlRequest)
        XCTAssertEqual(run.host.first { $0["method"] == "notifications/elicitation/complete" }, Self.completion)
        let initialize = run.server.first { $0.body["method"] == "initialize" }
        XCTAssertEqual(initialize.map { String(decoding: $0.request.body ?? [], as: UTF8.self) }, lines[0], "byte for byte")
    }

    func testNoBrowserIsACancelAndARefusedURLADecline() async throws {
        var run = await run(Self.sessionHost("{}"), server: Self.sessionServer, browser: false, answerAwaited: true)
        XCTAssertEqual(run.answered, ["action": "cancel"])
        let unsafe: @Sendable (HTTPRequest) -> HTTPResponse = { request in
            let response = Self.sessionServer(request)
            let text = String(decoding: response.body, as: UTF8.self).replacingOccurrences(of: "https://pay", with: "http://pay")
            return HTTPResponse(status: response.status, headers: response.headers, body: Array(text.utf8))
        }
        run = await self.run(Self.sessionHost("{}"), server: unsafe, answerAwaited: true)
        XCTAssertEqual(run.answered, ["action": "decline"], "plain http to another machine is never opened")
        XCTAssertEqual(run.opened, [])
    }

    func testAURLElicitationRequiredErrorHasItsPagesOpenedAndReachesTheHostAsItCame() async throws {
        let server: @Sendable (HTTPRequest) -> HTTPResponse = { request in
            let body = Seen(request: request).body
            guard request.method == "POST", body["method"] == "tools/call" else { return RevisionTranslationTests.sessionServer(request) }
            // On an event stream, as the SDKs answer a tools/call.
            let event = "event: message\ndata: \(JSONSerializer.string(Self.requiredError(body["id"] ?? .null)))\n\n"
            return HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: Array(event.utf8))
        }
        var run = await run(Self.sessionHost("{}"), server: server)
        XCTAssertEqual(run.host.first { $0["id"] == 1 }, Self.requiredError(1), "the host may retry once the page is done")
        XCTAssertEqual(run.opened, [Self.page], "once")
        run = await self.run(Self.sessionHost(#"{"elicitation":{"url":{}}}"#), server: server)
        XCTAssertEqual(run.host.first { $0["id"] == 1 }, Self.requiredError(1))
        XCTAssertEqual(run.opened, [], "the host opens its own")
    }

    func testAnOldHostBeforeAStatelessServerHasTheInputRequestAnsweredByTheBridge() async throws {
        let run = await run(Self.sessionHost("{}"), server: Self.statelessServer)
        XCTAssertEqual(run.opened, [Self.page])
        XCTAssertEqual(run.host.first { $0["id"] == 1 }?["result"]?["content"]?.arrayValue?.first?["text"], "paid: accept", "\(run.host)")
        XCTAssertFalse(run.host.contains { $0["method"] != nil }, "the host is asked nothing: \(run.host)")
        let meta = run.server.last { $0.body["method"] == "tools/call" }?.body["params"]?["_meta"]
        XCTAssertEqual(meta?["io.modelcontextprotocol/clientCapabilities"], ["elicitation": ["url": [:]]], "URL mode declared in the host's _meta")
    }

    func testAStatelessHostBeforeASessionServerHasTheStreamsElicitationOpenedByTheBridge() async throws {
        let meta = #""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#
        let lines = [#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"# + meta + "}}",
                     #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"pay","# + meta + "}}"]
        let run = await run(lines, server: Self.sessionServer, answerAwaited: true)
        XCTAssertEqual(run.opened, [Self.page])
        XCTAssertEqual(run.answered, ["action": "accept"])
        XCTAssertEqual(run.host.first { $0["id"] == 2 }?["result"]?["content"]?.arrayValue?.first?["text"], "done", "no input_required round: \(run.host)")
        XCTAssertEqual(run.server.first { $0.body["method"] == "initialize" }?.body["params"]?["capabilities"], ["elicitation": ["url": [:]]])
    }
}
