@testable import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 33 item 1: the bridge between a host and a server on either side of MCP's 2026-07-28
/// (stateless) revision — the translation rules one by one, then the bridge against scripted
/// servers of one era each, and pass-through when both sides agree.
final class RevisionTranslationTests: XCTestCase {
    typealias Box = MCPBridgeAuthTests.Box
    typealias Server = MCPBridgeAuthTests.Server

    static let modern = MCPMessage.statelessRevision
    static let modernList: JSONValue = [.string(modern)]

    // MARK: The rules

    func testARefusalNamingTheOtherEraInvitesTranslationAndAFailureDoesNot() {
        let invites: [JSONValue] = [
            MCPMessage.error(id: 1, code: -32601, message: "Method not found"),
            MCPMessage.error(id: 1, code: -32022, message: "Unsupported protocol version", data: ["supported": Self.modernList]),
            MCPMessage.error(id: 1, code: -32603, message: "The MCP server answered HTTP 400", data: ["reason": "requestFailed", "status": 400]),
        ]
        for answer in invites { XCTAssertTrue(RevisionTranslation.invitesOtherEra(answer), "\(answer)") }
        let stays: [JSONValue] = [
            ["jsonrpc": "2.0", "id": 1, "result": [:]],
            MCPMessage.error(id: 1, code: -32603, message: "The MCP server answered HTTP 503", data: ["reason": "requestFailed", "status": 503]),
            MCPMessage.error(id: 1, code: 3, message: "login failed", data: ["reason": "loginFailed"]),
            MCPMessage.error(id: 1, code: -32602, message: "Invalid params"),
        ]
        for answer in stays { XCTAssertFalse(RevisionTranslation.invitesOtherEra(answer), "\(answer)") }
    }

    func testASessionHostsRequestGainsTheStatelessMetaAndKeepsItsOwn() {
        var host = RevisionTranslation.hostSession(from: ["jsonrpc": "2.0", "id": 0, "method": "initialize", "params": [
            "protocolVersion": "2025-06-18", "capabilities": ["elicitation": [:]], "clientInfo": ["name": "h", "version": "1"]]])
        host.logLevel = "info"
        let request: JSONValue = ["jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": ["name": "count", "_meta": ["progressToken": 7]]]
        let meta = RevisionTranslation.stateless(request, for: host)["params"]?["_meta"]
        XCTAssertEqual(meta?["progressToken"], 7)
        XCTAssertEqual(meta?[MCPMessage.protocolVersionMetaKey], .string(Self.modern))
        XCTAssertEqual(meta?["io.modelcontextprotocol/clientCapabilities"], ["elicitation": ["form": [:], "url": [:]]],
                       "the host's, with the URL elicitations the bridge opens itself (issue 33 item 5)")
        XCTAssertEqual(meta?["io.modelcontextprotocol/clientInfo"], ["name": "h", "version": "1"])
        XCTAssertEqual(meta?["io.modelcontextprotocol/logLevel"], "info")
        XCTAssertEqual(RevisionTranslation.stateless(request, for: host)["params"]?["name"], "count")
    }

    func testInitializeIsAnsweredFromDiscoverAtTheHostsRevision() {
        let discovered: JSONValue = ["supportedVersions": Self.modernList, "capabilities": ["tools": [:]], "instructions": "Be brief",
                                     "_meta": ["io.modelcontextprotocol/serverInfo": ["name": "s", "version": "2"]],
                                     "resultType": "complete", "cacheScope": "public", "ttlMs": 1000]
        let answer = RevisionTranslation.initializeResult(id: 0, discovered: discovered, hostVersion: "2025-06-18")
        XCTAssertEqual(answer, ["jsonrpc": "2.0", "id": 0, "result": ["protocolVersion": "2025-06-18", "capabilities": ["tools": [:]],
                                                                       "serverInfo": ["name": "s", "version": "2"], "instructions": "Be brief"]])
        XCTAssertEqual(RevisionTranslation.initializeResult(id: 0, discovered: discovered, hostVersion: "2024-01-01")["result"]?["protocolVersion"],
                       "2025-11-25", "a revision the bridge does not know: the newest session revision")
    }

    func testInputRequestsAndTheRetry() {
        let answer: JSONValue = ["jsonrpc": "2.0", "id": 3, "result": ["resultType": "input_required", "requestState": "opaque",
                                                                       "inputRequests": ["b": ["method": "roots/list"],
                                                                                         "a": ["method": "elicitation/create", "params": ["message": "Name?"]]]]]
        let inputs = RevisionTranslation.inputRequests(answer)
        XCTAssertEqual(inputs?.map(\.key), ["a", "b"])
        XCTAssertEqual(inputs?.first?.method, "elicitation/create")
        XCTAssertEqual(inputs?.first?.params?["message"], "Name?")
        XCTAssertNil(RevisionTranslation.inputRequests(["jsonrpc": "2.0", "id": 3, "result": ["resultType": "complete"]]))
        let retried = RevisionTranslation.retried(["jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ["name": "ask"]],
                                                  responses: ["a": ["action": "accept"]], state: "opaque")
        XCTAssertEqual(retried["params"], ["name": "ask", "inputResponses": ["a": ["action": "accept"]], "requestState": "opaque"])
        let held = RevisionTranslation.inputRequired(id: 9, key: "k", request: ["jsonrpc": "2.0", "id": 1, "method": "roots/list"])
        XCTAssertEqual(held, ["jsonrpc": "2.0", "id": 9, "result": ["resultType": "input_required", "inputRequests": ["k": ["method": "roots/list"]], "requestState": "k"]])
        XCTAssertEqual(RevisionTranslation.inputRequests(held)?.first?.key, "k", "what the bridge makes, it reads")
        XCTAssertEqual(RevisionTranslation.answering(["jsonrpc": "2.0", "id": 3, "result": [:]], as: 11), ["jsonrpc": "2.0", "id": 11, "result": [:]])
        XCTAssertEqual(RevisionTranslation.sessionAnswer(["jsonrpc": "2.0", "id": 1, "result": ["tools": [], "resultType": "complete", "cacheScope": "private", "ttlMs": 0]]),
                       ["jsonrpc": "2.0", "id": 1, "result": ["tools": []]])
    }

    func testAStatelessHostsMessagesBeforeASessionServer() {
        let discover: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": ["_meta": [
            "io.modelcontextprotocol/protocolVersion": .string(Self.modern), "io.modelcontextprotocol/clientCapabilities": ["sampling": [:]]]]]
        XCTAssertEqual(RevisionTranslation.initializeRequest(id: 1, version: "2025-11-25", from: discover)["params"],
                       ["protocolVersion": "2025-11-25", "capabilities": ["sampling": [:], "elicitation": ["url": [:]]], "clientInfo": ["name": "auth-agent", "version": "1"]])
        let initialized: JSONValue = ["jsonrpc": "2.0", "id": 1, "result": ["protocolVersion": "2025-11-25", "capabilities": ["tools": [:]],
                                                                            "serverInfo": ["name": "s", "version": "2"]]]
        XCTAssertEqual(RevisionTranslation.discoverResult(initialized: initialized),
                       ["supportedVersions": Self.modernList, "capabilities": ["tools": [:]], "resultType": "complete", "cacheScope": "private",
                        "ttlMs": 0, "_meta": ["io.modelcontextprotocol/serverInfo": ["name": "s", "version": "2"]]])
        let list: JSONValue = ["jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": "x", "_meta": [
            "io.modelcontextprotocol/protocolVersion": .string(Self.modern), "progressToken": 1]]]
        XCTAssertEqual(RevisionTranslation.withoutStatelessMeta(list)["params"], ["name": "x", "_meta": ["progressToken": 1]])
        let bare = RevisionTranslation.withoutStatelessMeta(discover)["params"]
        XCTAssertEqual(bare, [:], "nothing left in _meta: no _meta")
        XCTAssertEqual(RevisionTranslation.statelessAnswer(["jsonrpc": "2.0", "id": 2, "result": ["tools": []]], method: "tools/list")["result"],
                       ["tools": [], "resultType": "complete", "cacheScope": "private", "ttlMs": 0])
        XCTAssertEqual(RevisionTranslation.statelessAnswer(["jsonrpc": "2.0", "id": 2, "result": ["content": []]], method: "tools/call")["result"],
                       ["content": [], "resultType": "complete"])
    }

    // MARK: The bridge between scripted servers

    /// What a scripted server saw: each request's method (or GET/DELETE), headers and body.
    struct Seen {
        let request: HTTPRequest
        var body: JSONValue { (try? JSONParser.parse(request.body ?? [])) ?? .null }
    }

    static func json(_ body: JSONValue, status: Int = 200, headers: [String: String] = [:]) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a }, body: JSONSerializer.bytes(body))
    }

    /// A 2026-07-28 server that knows no other revision: `initialize` refused as the versioning page
    /// says, `tools/call` of `ask` asks the host for a name first.
    static func statelessServer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return HTTPResponse(status: 405, headers: [:]) }
        let body = (try? JSONParser.parse(request.body ?? [])) ?? .null
        let id = body["id"] ?? .null
        guard request.header("mcp-protocol-version") == modern else {
            return json(MCPMessage.error(id: id, code: -32022, message: "Unsupported protocol version", data: ["supported": modernList]), status: 400)
        }
        if id == .null { return HTTPResponse(status: 202, headers: [:]) }
        let result: JSONValue
        switch body["method"]?.stringValue {
        case "server/discover":
            result = ["supportedVersions": modernList, "capabilities": ["tools": [:]], "instructions": "Stateless",
                      "_meta": ["io.modelcontextprotocol/serverInfo": ["name": "stateless", "version": "1"]], "resultType": "complete", "cacheScope": "public", "ttlMs": 0]
        case "tools/list":
            result = ["tools": [["name": "ask"]], "resultType": "complete", "cacheScope": "private", "ttlMs": 0]
        default:
            if let name = body["params"]?["inputResponses"]?["name"]?["content"]?["value"]?.stringValue, body["params"]?["requestState"] == "s1" {
                result = ["content": [["type": "text", "text": .string("Hello, \(name)!")]], "resultType": "complete"]
            } else {
                result = ["resultType": "input_required", "requestState": "s1",
                          "inputRequests": ["name": ["method": "elicitation/create", "params": ["message": "Name?", "requestedSchema": ["type": "object"]]]]]
            }
        }
        return json(["jsonrpc": "2.0", "id": id, "result": result])
    }

    /// A server of the `initialize` handshake alone, refusing 2026-07-28 as the TypeScript SDK 1.x does.
    static func sessionServer(_ request: HTTPRequest) -> HTTPResponse {
        if request.method == "DELETE" { return HTTPResponse(status: 200, headers: [:]) }
        guard request.method == "POST" else { return HTTPResponse(status: 405, headers: [:]) }
        let body = (try? JSONParser.parse(request.body ?? [])) ?? .null
        let id = body["id"] ?? .null
        if request.header("mcp-protocol-version") == modern {
            return json(MCPMessage.error(id: .null, code: -32000, message: "Bad Request: Unsupported protocol version: 2026-07-28"), status: 400)
        }
        if id == .null { return HTTPResponse(status: 202, headers: [:]) }
        switch body["method"]?.stringValue {
        case "initialize":
            return json(["jsonrpc": "2.0", "id": id, "result": ["protocolVersion": body["params"]?["protocolVersion"] ?? "2025-11-25",
                                                                "capabilities": ["tools": [:]], "serverInfo": ["name": "session", "version": "1"]]],
                        headers: ["Mcp-Session-Id": "s-9"])
        default:
            guard request.header("mcp-session-id") == "s-9" else { return json(MCPMessage.error(id: id, code: -32600, message: "No session"), status: 400) }
            return json(["jsonrpc": "2.0", "id": id, "result": ["tools": [["name": "echo"]]]])
        }
    }

    /// Runs `lines` through a bridge before `server`; the host answers `elicitation/create` with `Ada`.
    private func run(_ lines: [String], server: @escaping @Sendable (HTTPRequest) -> HTTPResponse, pin: String? = nil) async -> (host: [JSONValue], server: [Seen]) {
        let seen = Box<[Seen]>([])
        let output = Box<[JSONValue]>([])
        let bridge = Box<MCPBridge?>(nil)
        let transport = Server { request in
            seen.with { $0.append(Seen(request: request)) }
            return server(request)
        }
        let made = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: transport, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                             options: .init(protocolVersion: pin),
                             output: { line in
                                 guard let value = try? JSONParser.parse(line) else { return }
                                 output.with { $0.append(value) }
                                 if value["method"] == "elicitation/create", let id = value["id"] {
                                     let answer: JSONValue = ["jsonrpc": "2.0", "id": id, "result": ["action": "accept", "content": ["value": "Ada"]]]
                                     bridge.with { $0 }?.receive(line: JSONSerializer.bytes(answer))
                                 }
                             }, log: { _ in })
        bridge.with { $0 = made }
        for line in lines { made.receive(line: Array(line.utf8)) }
        // A host keeps its input open until it has its answers (the bridge's questions to it included).
        let requests = lines.filter { (try? JSONParser.parse(Array($0.utf8)))?["id"] != nil }.count
        for _ in 0..<500 where output.with({ $0.filter { $0["method"] == nil }.count }) < requests {
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        await made.finish(grace: 5)
        return (output.with { $0 }, seen.with { $0 })
    }

    private static func answer(_ id: JSONValue, in output: [JSONValue]) -> JSONValue? {
        output.first { $0["id"] == id && $0["method"] == nil }
    }

    static let oldHost = [
        #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{}},"clientInfo":{"name":"old","version":"1"}}}"#,
        #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask","arguments":{}}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    ]

    func testAnOldHostBeforeAStatelessServerGetsTheSessionRevisionFromTheBridge() async throws {
        let (output, seen) = await run(Self.oldHost, server: Self.statelessServer)
        let initialized = try XCTUnwrap(Self.answer(0, in: output), "\(output)")
        XCTAssertEqual(initialized["result"]?["protocolVersion"], "2025-06-18")
        XCTAssertEqual(initialized["result"]?["serverInfo"]?["name"], "stateless")
        XCTAssertEqual(initialized["result"]?["instructions"], "Stateless")
        XCTAssertEqual(Self.answer(1, in: output)?["result"], ["tools": [["name": "ask"]]], "no resultType or cache hints for a 2025 host")
        XCTAssertEqual(Self.answer(2, in: output)?["result"]?["content"]?.arrayValue?.first?["text"], "Hello, Ada!", "\(output)")
        XCTAssertEqual(Self.answer(3, in: output)?["result"], [:], "ping answered by the bridge")
        XCTAssertEqual(output.first { $0["method"] == "elicitation/create" }?["params"]?["message"], "Name?")
        XCTAssertEqual(output.count, 5, "four answers and one elicitation: \(output)")

        let posts = seen.filter { $0.request.method == "POST" }
        let methods = posts.map { $0.body["method"]?.stringValue ?? "-" }
        XCTAssertEqual(methods.prefix(2), ["initialize", "server/discover"], "initialize refused, then discover")
        XCTAssertEqual(methods.dropFirst(2).sorted(), ["tools/call", "tools/call", "tools/list"], "no notifications, no ping (side by side, in either order)")
        XCTAssertFalse(seen.contains { $0.request.method == "GET" || $0.request.method == "DELETE" }, "no session, no stream")
        for post in posts.dropFirst() {
            let meta = post.body["params"]?["_meta"]
            XCTAssertEqual(meta?[MCPMessage.protocolVersionMetaKey], JSONValue.string(Self.modern))
            XCTAssertEqual(meta?["io.modelcontextprotocol/clientCapabilities"], ["elicitation": ["form": [:], "url": [:]]] as JSONValue)
            XCTAssertEqual(post.request.header("mcp-protocol-version"), Self.modern)
            XCTAssertEqual(post.request.header("mcp-method"), post.body["method"]?.stringValue)
        }
        let retried = posts.last { $0.body["method"] == "tools/call" }
        XCTAssertEqual(retried?.request.header("mcp-name"), "ask")
        XCTAssertEqual(retried?.body["params"]?["requestState"], "s1")
        XCTAssertEqual(retried?.body["params"]?["inputResponses"]?["name"]?["content"]?["value"], "Ada")
    }

    func testABatchForAStatelessServerIsAnsweredRequestByRequest() async throws {
        // Batches left MCP in 2025-06-18; a 2025-03-26 host may still send one, and each request in it is owed an answer.
        let batch = #"[{"jsonrpc":"2.0","id":7,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":8,"method":"ping"}]"#
        let (output, _) = await run([Self.oldHost[0], batch], server: Self.statelessServer)
        XCTAssertEqual(Self.answer(7, in: output)?["error"]?["code"], -32600, "\(output)")
        XCTAssertEqual(Self.answer(8, in: output)?["error"]?["code"], -32600)
    }

    static let statelessHost: [String] = [
        #"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"new","version":"2"}}}}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ]

    func testAStatelessHostBeforeASessionServerGetsDiscoverFromTheBridge() async throws {
        let (output, seen) = await run(Self.statelessHost, server: Self.sessionServer)
        let discovered = try XCTUnwrap(Self.answer(1, in: output)?["result"], "\(output)")
        XCTAssertEqual(discovered["supportedVersions"], Self.modernList)
        XCTAssertEqual(discovered["_meta"]?["io.modelcontextprotocol/serverInfo"]?["name"], "session")
        XCTAssertEqual(discovered["resultType"], "complete")
        XCTAssertEqual(Self.answer(2, in: output)?["result"], ["tools": [["name": "echo"]], "resultType": "complete", "cacheScope": "private", "ttlMs": 0])
        XCTAssertEqual(Self.answer(3, in: output)?["result"], discovered, "a later discover is answered from the session")

        let posts = seen.filter { $0.request.method == "POST" }
        XCTAssertEqual(posts.map { $0.body["method"]?.stringValue ?? "-" }, ["server/discover", "initialize", "notifications/initialized", "tools/list"])
        XCTAssertEqual(posts[1].body["params"]?["capabilities"], ["sampling": [:], "elicitation": ["url": [:]]] as JSONValue,
                       "the host's capabilities from its first _meta, and URL elicitation (the bridge opens those URLs)")
        XCTAssertEqual(posts[1].body["params"]?["clientInfo"]?["name"], "new")
        XCTAssertEqual(posts[3].request.header("mcp-session-id"), "s-9")
        XCTAssertEqual(posts[3].request.header("mcp-protocol-version"), "2025-11-25")
        XCTAssertNil(posts[3].body["params"]?["_meta"], "the stateless revision's _meta stripped")
        XCTAssertEqual(seen.filter { $0.request.method == "DELETE" }.count, 1, "the bridge's session ends with it")
    }

    func testAStatelessHostsCancellationReachesASessionServerAsTheNotification() async throws {
        let seen = Box<[Seen]>([])
        let output = Box<[JSONValue]>([])
        let transport = Server { request in
            seen.with { $0.append(Seen(request: request)) }
            if Seen(request: request).body["params"]?["name"] == "slow" { usleep(400_000) }
            return Self.sessionServer(request)
        }
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: transport, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               output: { line in if let value = try? JSONParser.parse(line) { output.with { $0.append(value) } } }, log: { _ in })
        func until(_ done: () -> Bool) async {
            for _ in 0..<300 where !done() { try? await Task.sleep(nanoseconds: 10_000_000) }
        }
        bridge.receive(line: Array(Self.statelessHost[0].utf8))
        await until { output.with { !$0.isEmpty } }
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#.utf8))
        await until { seen.with { $0.contains { $0.body["id"] == 5 } } }
        bridge.receive(line: Array(#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.utf8))
        await bridge.finish(grace: 2)
        let cancelled = seen.with { $0 }.first { $0.body["method"] == "notifications/cancelled" }
        XCTAssertEqual(cancelled?.body["params"], ["requestId": 5], "the notification, stripped of the stateless _meta")
        XCTAssertEqual(cancelled?.request.header("mcp-session-id"), "s-9")
        XCTAssertNil(Self.answer(5, in: output.with { $0 }), "the host abandoned it: no answer")
    }

    func testSameRevisionsPassThroughWithNothingAdded() async throws {
        // A server of both eras (as the MCP Python SDK's is): each side's messages go as they came, one POST each.
        let both: @Sendable (HTTPRequest) -> HTTPResponse = { request in
            request.header("mcp-protocol-version") == Self.modern || request.header("mcp-session-id") == nil && (try? JSONParser.parse(request.body ?? []))?["method"] != "initialize"
                ? Self.statelessServer(request) : Self.sessionServer(request)
        }
        let old = [Self.oldHost[0].replacingOccurrences(of: ",", with: ", ")] + Self.oldHost[1...2]
        var (output, seen) = await run(old, server: both)
        XCTAssertEqual(Self.answer(0, in: output)?["result"]?["serverInfo"]?["name"], "session")
        var posts = seen.filter { $0.request.method == "POST" }
        // (The host's messages after initialize are POSTed side by side, in either order.)
        XCTAssertEqual(posts.map { String(decoding: $0.request.body ?? [], as: UTF8.self) }.sorted(), old.sorted(), "byte for byte, nothing else")

        let new = Array(Self.statelessHost[0...1])
        (output, seen) = await run(new, server: both)
        XCTAssertEqual(Self.answer(1, in: output)?["result"]?["_meta"]?["io.modelcontextprotocol/serverInfo"]?["name"], "stateless")
        XCTAssertEqual(Self.answer(2, in: output)?["result"]?["cacheScope"], "private")
        posts = seen.filter { $0.request.method == "POST" }
        XCTAssertEqual(posts.map { String(decoding: $0.request.body ?? [], as: UTF8.self) }, new, "byte for byte, nothing else")
    }

    func testProtocolVersionPinsWhatTheServerIsOffered() async throws {
        // A 2026 pin: an old host's initialize never reaches the server.
        var (output, seen) = await run(Array(Self.oldHost[0...2]), server: Self.statelessServer, pin: Self.modern)
        XCTAssertEqual(Self.answer(1, in: output)?["result"], ["tools": [["name": "ask"]]])
        XCTAssertEqual(seen.compactMap { $0.body["method"]?.stringValue }, ["server/discover", "tools/list"])
        // A session pin: a stateless host's discover never reaches the server, which is offered the pinned revision.
        (output, seen) = await run(Array(Self.statelessHost[0...1]), server: Self.sessionServer, pin: "2025-06-18")
        XCTAssertEqual(Self.answer(2, in: output)?["result"]?["resultType"], "complete")
        XCTAssertEqual(seen.first?.body["method"], "initialize")
        XCTAssertEqual(seen.first?.body["params"]?["protocolVersion"], "2025-06-18")
        XCTAssertEqual(seen.last { $0.request.method == "POST" }?.request.header("mcp-protocol-version"), "2025-06-18")
        // A session pin for a session host: its initialize offers the pinned revision.
        (output, seen) = await run(Array(Self.oldHost[0...0]), server: Self.sessionServer, pin: "2025-03-26")
        XCTAssertEqual(seen.first?.body["params"]?["protocolVersion"], "2025-03-26")
        XCTAssertEqual(Self.answer(0, in: output)?["result"]?["protocolVersion"], "2025-03-26")
    }
}
