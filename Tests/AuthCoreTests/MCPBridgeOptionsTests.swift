@testable import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 33 item 6, the options an mcp-remote user reaches for: `--header` on every request beside
/// the agent's authorization, and `--ignore-tool` hiding tools from `tools/list` and refusing to
/// call them — against a scripted server that records what reached it.
final class MCPBridgeOptionsTests: XCTestCase {
    typealias Box = MCPBridgeAuthTests.Box

    func testIgnoreToolPatterns() {
        let filter = ToolFilter(["delete*", "*account", "exact", "a*b*c"])
        for name in ["deleteTask", "delete", "getAccount_no", "getaccount", "exact", "abc", "aXbYc", "a-b-c"] {
            XCTAssertEqual(filter.ignores(name), ["deleteTask", "delete", "getaccount", "exact", "abc", "aXbYc", "a-b-c"].contains(name), name)
        }
        XCTAssertFalse(filter.ignores("exactly"))
        XCTAssertFalse(filter.ignores("undelete"))
        XCTAssertFalse(ToolFilter([]).ignores("anything"))
        XCTAssertTrue(ToolFilter(["*"]).ignores(""))
    }

    func testHeadersGoWithEveryRequestAndIgnoredToolsAreNeitherListedNorCalled() async throws {
        let seen = Box<[HTTPRequest]>([])
        let server = MCPBridgeAuthTests.Server { request in
            seen.with { $0.append(request) }
            let message = (try? JSONParser.parse(request.body ?? [])) ?? .null
            let id = message["id"] ?? .null
            let result: JSONValue = message["method"] == "tools/list"
                ? ["tools": [["name": "search"], ["name": "deleteRepo"], ["name": "removeAccount"]]]
                : ["content": [["type": "text", "text": "ok"]]]
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"],
                                body: JSONSerializer.bytes(["jsonrpc": "2.0", "id": id, "result": result]))
        }
        let output = Box<[[UInt8]]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: server, authorizer: MCPBridgeAuthTests.Logins(token: "t"),
                               options: .init(headers: [("X-Tenant", "acme")], ignoredTools: ToolFilter(["delete*", "*Account"])),
                               output: { line in output.with { $0.append(line) } }, log: { _ in })
        for line in [#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                     #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deleteRepo","arguments":{}}}"#,
                     #"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search","arguments":{}}}"#] {
            bridge.receive(line: Array(line.utf8))
        }
        await bridge.finish(grace: 5)
        let answers = try output.with { $0 }.map { try JSONParser.parse($0) }
        let byId = Dictionary(answers.compactMap { a in a["id"].map { ($0, a) } }, uniquingKeysWith: { a, _ in a })
        XCTAssertEqual(byId[1]?["result"]?["tools"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["search"])
        XCTAssertEqual(byId[2]?["error"]?["code"], -32602, "\(String(describing: byId[2]))")
        XCTAssertTrue(byId[2]?["error"]?["message"]?.stringValue?.contains("deleteRepo") == true)
        XCTAssertEqual(byId[3]?["result"]?["content"]?.arrayValue?.first?["text"], "ok")
        let requests = seen.with { $0 }
        XCTAssertFalse(requests.contains { (try? JSONParser.parse($0.body ?? []))?["params"]?["name"] == "deleteRepo" }, "never sent")
        XCTAssertEqual(requests.count, 2)
        for request in requests {
            XCTAssertEqual(request.header("x-tenant"), "acme")
            XCTAssertEqual(request.header("authorization"), "Bearer t", "beside, never instead of, the agent's authorization")
        }
    }
}
