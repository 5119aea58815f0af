import Foundation
import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// A shortcut answers only what its method's handler would answer at that
/// moment; everything else reaches the handler as if there were no shortcut.
final class RPCShortcutTests: XCTestCase {
    final class Harness: @unchecked Sendable {
        let written = Locked<[UInt8]>([])
        let gate = Locked<[CheckedContinuation<Void, Never>]>([])
        /// What `runsAtOnce` told the shortcut, call by call.
        let admitted = Locked<[Bool]>([])
        var connection: RPCConnection!

        init() {
            var registry = MethodRegistry()
            registry.register(MethodDescriptor("change", summary: "", result: nil), ordering: { _ in .changes("k") }) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    return "changed"
                }
            }
            registry.register(MethodDescriptor("slow", summary: "", result: nil)) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    return "slow"
                }
            }
            // `use` reads the key its param `x` names ("k" by default); its shortcut knows
            // params {"x": "…"} and answers like the handler, or throws for {"x": "fail"}.
            registry.register(MethodDescriptor("use", summary: "", result: nil), ordering: { .uses($0["x"]?.stringValue ?? "k") }) { _ in
                .result("by handler")
            }
            registry.registerShortcut("use") { [admitted] params, call throws(RPCError) in
                var x: PlainString?
                guard params.forEachMember({ key, value in
                    guard key.is("x"), case .string(let s) = value else { return false }
                    x = s
                    return true
                }), let x else { return nil }
                if x.is("fail") { throw RPCError(code: 1001, message: "failed", data: nil) }
                let now = call.runsAtOnce(.uses(x.string))
                admitted.withLock { $0.append(now) }
                return now ? JSONText("by shortcut") : nil
            }
            let output = OutputSink(write: { [written] bytes in
                written.withLock { $0.append(contentsOf: bytes) }
                return true
            }, onClosed: {})
            connection = RPCConnection(registry: registry, output: output, logger: Logger(level: .error, sink: { _ in }), onExit: { _ in })
        }

        func send(_ line: String) {
            Array(line.utf8).withUnsafeBufferPointer { connection.handleLine($0) }
            connection.output.flush()
        }

        var messages: [JSONValue] {
            written.current.split(separator: 0x0A).map { try! JSONParser.parse(Array($0)) }
        }

        func waitFor(count: Int) -> [JSONValue] {
            let deadline = Date().addingTimeInterval(5)
            while messages.count < count && Date() < deadline { usleep(1000) }
            return messages
        }

        func waitForWaiters(_ n: Int) {
            let deadline = Date().addingTimeInterval(5)
            while gate.current.count < n && Date() < deadline { usleep(1000) }
        }

        func release() {
            let waiting = gate.withLock { g -> [CheckedContinuation<Void, Never>] in defer { g = [] }; return g }
            waiting.forEach { $0.resume() }
        }
    }

    func testAPlainRequestIsAnsweredByTheShortcutAndTheRestByTheHandler() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","id":1,"method":"use","params":{"x":"k"}}"#)
        h.send(#" { "params" : { "x" : "k" } , "method" : "use" , "id" : "s" , "jsonrpc" : "2.0" } "#)
        h.send(#"{"jsonrpc":"2.0","id":2,"method":"use","params":{"x":"\u006b"}}"#)  // an escape: not plain
        h.send(#"{"jsonrpc":"2.0","id":3,"method":"use","params":{"z":"k"}}"#)  // the shortcut does not read it
        h.send(#"{"jsonrpc":"2.0","id":4,"method":"use"}"#)  // no params: not plain
        h.send(#"{"jsonrpc":"2.0","id":5,"method":"use","params":{"x":"fail"}}"#)
        XCTAssertEqual(h.messages, [
            ["jsonrpc": "2.0", "id": 1, "result": "by shortcut"],
            ["jsonrpc": "2.0", "id": "s", "result": "by shortcut"],
            ["jsonrpc": "2.0", "id": 2, "result": "by handler"],
            ["jsonrpc": "2.0", "id": 3, "result": "by handler"],
            ["jsonrpc": "2.0", "id": 4, "result": "by handler"],
            ["jsonrpc": "2.0", "id": 5, "error": ["code": 1001, "message": "failed"]],
        ])
    }

    func testAPlainPingIsAnsweredAsTheEngineAnswersAnyPing() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"ping","id":1}"#)
        h.send(#"{"jsonrpc":"2.0","method":"ping","id":"p","params":{}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"ping","id":2,"params":{"a":1}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"ping","id":3,"params":[]}"#)
        h.send(#"{"jsonrpc":"2.0","method":"ping"}"#)
        XCTAssertEqual(h.messages, [
            ["jsonrpc": "2.0", "id": 1, "result": [:]],
            ["jsonrpc": "2.0", "id": "p", "result": [:]],
            ["jsonrpc": "2.0", "id": 2, "error": ["code": -32602, "message": "Invalid params: unknown field 'a'; this method takes no params"]],
            ["jsonrpc": "2.0", "id": 3, "result": [:]],
        ])
    }

    func testAUseAfterAnUnansweredChangeWaitsForIt() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","id":1,"method":"change","params":{}}"#)
        h.waitForWaiters(1)
        h.send(#"{"jsonrpc":"2.0","id":2,"method":"use","params":{"x":"k"}}"#)
        h.send(#"{"jsonrpc":"2.0","id":3,"method":"use","params":{"x":"other"}}"#)
        XCTAssertEqual(h.messages, [["jsonrpc": "2.0", "id": 3, "result": "by shortcut"]], "another key is not held back")
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 1, "the use waits for the change")
        XCTAssertEqual(h.admitted.current, [false, true])
        h.release()
        XCTAssertEqual(Array(h.waitFor(count: 3).dropFirst()),
                       [["jsonrpc": "2.0", "id": 1, "result": "changed"], ["jsonrpc": "2.0", "id": 2, "result": "by handler"]])
        h.send(#"{"jsonrpc":"2.0","id":4,"method":"use","params":{"x":"k"}}"#)
        XCTAssertEqual(h.messages.last, ["jsonrpc": "2.0", "id": 4, "result": "by shortcut"], "the change answered: at once again")
        XCTAssertEqual(h.admitted.current, [false, true, true])
    }

    func testAnIdInFlightAndShuttingDownAreAnsweredAsWithoutTheShortcut() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","id":7,"method":"slow","params":{}}"#)
        h.waitForWaiters(1)
        h.send(#"{"jsonrpc":"2.0","id":7,"method":"use","params":{"x":"k"}}"#)
        XCTAssertEqual(h.messages, [["jsonrpc": "2.0", "id": 7, "error": ["code": -32600, "message": "Invalid Request: id 7 is in use by a request still in flight"]]])
        h.release()
        _ = h.waitFor(count: 2)
        h.send(#"{"jsonrpc":"2.0","id":8,"method":"shutdown"}"#)
        h.send(#"{"jsonrpc":"2.0","id":9,"method":"use","params":{"x":"k"}}"#)
        XCTAssertEqual(h.messages.last, ["jsonrpc": "2.0", "id": 9, "error": ["code": -32600, "message": "Invalid Request: the agent is shutting down; only 'exit' is accepted"]])
        XCTAssertEqual(h.admitted.current, [], "the shortcut never ran")
    }
}
