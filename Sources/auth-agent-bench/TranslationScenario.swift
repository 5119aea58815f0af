import AuthCore
import Dispatch
import Foundation
import JSON

/// `--mcp-translation [--calls N]`: what translating between MCP revisions costs the bridge per
/// `tools/call`, apart from the network and the server. The bridge runs in this process before a
/// server that answers at once from memory (no socket, no auth), so a call's time is the bridge's
/// own work: reading the host's line, the revision's headers and `_meta`, the answer's rewriting.
/// Pass-through (a 2025-11-25 host before a session server) beside the two translations: that host
/// before a stateless 2026-07-28 server, and a stateless host before a session server. Calls go one
/// at a time, the three cases in turns; p50 and p99 of N (2,000) each. Target: a translation adds
/// at most 0.05 ms to the p50 of pass-through.
enum TranslationScenario {
    static let session = "2025-11-25"
    static let stateless = "2026-07-28"

    struct Case {
        let name: String
        let server: @Sendable (HTTPRequest) -> HTTPResponse
        /// What the host sends first (its `initialize` or `server/discover`), then each call with its id.
        let opening: String
        let call: @Sendable (Int) -> String
    }

    static func run(report: Report, calls: Int) {
        let meta = #""_meta":{"io.modelcontextprotocol/protocolVersion":"\#(stateless)","io.modelcontextprotocol/clientCapabilities":{}}"#
        let initialize = #"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"\#(session)","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
        let oldCall: @Sendable (Int) -> String = { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"# }
        let cases = [
            Case(name: "pass-through (\(session) host, session server)", server: sessionServer, opening: initialize, call: oldCall),
            Case(name: "\(session) host before a \(stateless) server", server: statelessServer, opening: initialize, call: oldCall),
            Case(name: "\(stateless) host before a session server", server: sessionServer,
                 opening: #"{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{\#(meta)}}"#,
                 call: { #"{"jsonrpc":"2.0","id":\#($0),"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},\#(meta)}}"# }),
        ]
        let bridges = cases.map { Bench(case: $0) }
        var samples = Array(repeating: [Double](), count: cases.count)
        for n in 1...calls {
            for i in (n % 2 == 0 ? Array(cases.indices) : cases.indices.reversed()) {
                guard let seconds = bridges[i].call(n) else {
                    report.row("mcp translation: \(cases[i].name)", agent: "no answer", baseline: "", ratio: "")
                    return
                }
                samples[i].append(seconds)
            }
        }
        for bridge in bridges { bridge.finish() }
        let base = Measure.median(samples[0])
        for (i, c) in cases.enumerated() {
            let p50 = Measure.median(samples[i])
            let p99 = samples[i].sorted()[min(samples[i].count - 1, samples[i].count * 99 / 100)]
            let added = i == 0 ? "" : String(format: "+%.3f ms over pass-through (target ≤ +0.05 ms)", (p50 - base) * 1000)
            report.row("mcp translation: \(c.name)", agent: String(format: "p50 %.3f ms, p99 %.3f ms", p50 * 1000, p99 * 1000),
                       baseline: i == 0 ? "\(calls) calls, in turns" : "", ratio: added)
        }
    }

    /// One bridge before its in-memory server; `call` sends one line and waits for its answer.
    final class Bench: @unchecked Sendable {
        private let bridge: MCPBridge
        private let answered = DispatchSemaphore(value: 0)
        private let c: Case

        init(case c: Case) {
            self.c = c
            let signal = answered
            bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: Memory(answer: c.server), authorizer: Unsigned(),
                               output: { line in if !line.contains(Array("\"method\"".utf8)) { signal.signal() } }, log: { _ in })
            bridge.receive(line: Array(c.opening.utf8))
            _ = answered.wait(timeout: .now() + 5)
        }

        func call(_ n: Int) -> Double? {
            let started = DispatchTime.now().uptimeNanoseconds
            bridge.receive(line: Array(c.call(n).utf8))
            guard answered.wait(timeout: .now() + 5) == .success else { return nil }
            return Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        }

        func finish() {
            let done = DispatchSemaphore(value: 0)
            Task { [bridge] in
                await bridge.finish(grace: 0.1)
                done.signal()
            }
            _ = done.wait(timeout: .now() + 5)
        }
    }

    struct Memory: HTTPStreamingTransport {
        let answer: @Sendable (HTTPRequest) -> HTTPResponse
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { answer(request) }
        func open(_ request: HTTPRequest) async throws -> HTTPStream { try await openWhole(request) }
    }

    struct Unsigned: MCPAuthorizer {
        func signature(for url: String, method: String, at target: String) async throws(AuthError) -> Signature? { nil }
        func renewed(after rejected: Signature, url: String, method: String, at target: String) async throws(AuthError) -> Signature? { nil }
        func logIn(url: String, challenge: BearerChallenge?) async throws(AuthError) -> Bool { false }
        func steppedUp(after rejected: Signature, scopes: [String], url: String, method: String, at target: String) async throws(AuthError) -> Signature? { nil }
        func keep(dpopNonce: String, url: String) {}
    }

    static func json(_ body: JSONValue, headers: [String: String] = [:]) -> HTTPResponse {
        HTTPResponse(status: 200, headers: headers.merging(["content-type": "application/json"]) { a, _ in a }, body: JSONSerializer.bytes(body))
    }

    static func echo(_ id: JSONValue) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "result": ["content": [["type": "text", "text": "hi"]], "isError": false]]
    }

    /// A server of the `initialize` handshake (with a session id), refusing 2026-07-28.
    static func sessionServer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return HTTPResponse(status: request.method == "DELETE" ? 200 : 405) }
        let body = (try? JSONParser.parse(request.body ?? [])) ?? .null
        guard let id = body["id"] else { return HTTPResponse(status: 202) }
        if request.header("mcp-protocol-version") == stateless {
            return HTTPResponse(status: 400, headers: ["content-type": "application/json"],
                                body: JSONSerializer.bytes(MCPMessage.error(id: .null, code: -32000, message: "Bad Request: Unsupported protocol version")))
        }
        if body["method"] == "initialize" {
            return json(["jsonrpc": "2.0", "id": id, "result": ["protocolVersion": .string(session), "capabilities": ["tools": [:]],
                                                                "serverInfo": ["name": "bench", "version": "1"]]], headers: ["mcp-session-id": "s"])
        }
        return json(echo(id))
    }

    /// A 2026-07-28 server: `initialize` refused as the versioning page says, `server/discover` answered.
    static func statelessServer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else { return HTTPResponse(status: 405) }
        let body = (try? JSONParser.parse(request.body ?? [])) ?? .null
        guard let id = body["id"] else { return HTTPResponse(status: 202) }
        guard request.header("mcp-protocol-version") == stateless else {
            return HTTPResponse(status: 400, headers: ["content-type": "application/json"],
                                body: JSONSerializer.bytes(MCPMessage.error(id: id, code: -32022, message: "Unsupported protocol version",
                                                                            data: ["supported": [.string(stateless)]])))
        }
        if body["method"] == "server/discover" {
            return json(["jsonrpc": "2.0", "id": id, "result": ["supportedVersions": [.string(stateless)], "capabilities": ["tools": [:]],
                                                                "_meta": ["io.modelcontextprotocol/serverInfo": ["name": "bench", "version": "1"]],
                                                                "resultType": "complete"]])
        }
        var answer = echo(id)
        if case .object(var o) = answer, case .object(var result)? = o["result"] {
            result["resultType"] = "complete"
            o["result"] = .object(result)
            answer = .object(o)
        }
        return json(answer)
    }
}
