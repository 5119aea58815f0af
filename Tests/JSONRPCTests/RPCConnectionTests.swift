import Foundation
import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// The engine in-process, with an in-memory output, for behaviour that needs
/// methods the agent does not have (deliberately slow ones).
final class RPCConnectionTests: XCTestCase {
    final class Harness: @unchecked Sendable {
        let written = Locked<[UInt8]>([])
        let exits = Locked<[Int32]>([])
        let gate = Locked<[CheckedContinuation<Void, Never>]>([])
        /// For each `ordered` call's `answered`: how many messages were written by then.
        let answeredAfter = Locked<[Int]>([])
        var connection: RPCConnection!

        init(options: RPCConnection.Options = .init()) {
            var registry = MethodRegistry()
            registry.register(MethodDescriptor("fast", summary: "", result: nil)) { _ in .result("fast") }
            registry.register(MethodDescriptor("slow", summary: "", result: nil)) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    try Task.checkCancellation()
                    return "slow"
                }
            }
            // Ordered on key "k": `change` waits (slowly) like a login, `use` answers at once like `sign`,
            // `slowUse` waits like a `token` that refreshes.
            registry.register(MethodDescriptor("change", summary: "", result: nil), ordering: { _ in .changes("k") }) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    try Task.checkCancellation()
                    return "changed"
                }
            }
            registry.register(MethodDescriptor("use", summary: "", result: nil), ordering: { _ in .uses("k") }) { _ in .result("used") }
            registry.register(MethodDescriptor("slowUse", summary: "", result: nil), ordering: { _ in .uses("k") }) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    return "slowly used"
                }
            }
            registry.register(MethodDescriptor("other", summary: "", result: nil), ordering: { _ in .uses("other") }) { _ in .result("other") }
            // `add` waits like an interactive login beside logged-in accounts.
            registry.register(MethodDescriptor("add", summary: "", result: nil), ordering: { _ in .adds("k") }) { [gate] _ in
                .later {
                    await withCheckedContinuation { c in gate.withLock { $0.append(c) } }
                    return "added"
                }
            }
            registry.register(MethodDescriptor("fails", summary: "", result: nil)) { _ in
                throw RPCError(code: 1001, message: "Not logged in.", data: ["reason": "notLoggedIn"])
            }
            registry.register(MethodDescriptor("crashes", summary: "", result: nil)) { _ in
                struct Secret: Error {}
                return .later { throw Secret() }
            }
            let output = OutputSink(write: { [written] bytes in
                written.withLock { $0.append(contentsOf: bytes) }
                return true
            }, onClosed: {})
            connection = RPCConnection(registry: registry, output: output, logger: Logger(level: .error, sink: { _ in }),
                                       options: options, onExit: { [exits] code in exits.withLock { $0.append(code) } })
        }

        func send(_ line: String) {
            Array(line.utf8).withUnsafeBufferPointer { connection.handleLine($0) }
            connection.output.flush()
        }

        var messages: [JSONValue] {
            written.current.split(separator: 0x0A).map { try! JSONParser.parse(Array($0)) }
        }

        func waitFor(count: Int, timeout: Double = 5) -> [JSONValue] {
            let deadline = Date().addingTimeInterval(timeout)
            while messages.count < count && Date() < deadline { usleep(1000) }
            return messages
        }

        func releaseSlow() {
            let waiting = gate.withLock { g -> [CheckedContinuation<Void, Never>] in defer { g = [] }; return g }
            waiting.forEach { $0.resume() }
        }

        func waitForSlowStarted(_ n: Int) {
            let deadline = Date().addingTimeInterval(5)
            while gate.current.count < n && Date() < deadline { usleep(1000) }
        }
    }

    func testSlowRequestDoesNotHoldBackLaterOnes() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slow","id":1}"#)
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":2}"#)
        h.waitForSlowStarted(1)
        XCTAssertEqual(h.waitFor(count: 1), [["jsonrpc": "2.0", "id": 2, "result": "fast"]])
        h.releaseSlow()
        XCTAssertEqual(h.waitFor(count: 2).last, ["jsonrpc": "2.0", "id": 1, "result": "slow"])
    }

    func testAUseWaitsUntilAnEarlierChangeIsAnsweredAndOtherKeysDoNot() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"change","id":1}"#)
        h.send(#"{"jsonrpc":"2.0","method":"use","id":2}"#)
        h.send(#"{"jsonrpc":"2.0","method":"other","id":3}"#)
        h.waitForSlowStarted(1)
        XCTAssertEqual(h.waitFor(count: 1), [["jsonrpc": "2.0", "id": 3, "result": "other"]], "another key is not held back")
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 1, "the use waits for the change")
        h.releaseSlow()
        XCTAssertEqual(Array(h.waitFor(count: 3).dropFirst()), [["jsonrpc": "2.0", "id": 1, "result": "changed"], ["jsonrpc": "2.0", "id": 2, "result": "used"]],
                       "the change's answer first")
        h.send(#"{"jsonrpc":"2.0","method":"use","id":4}"#)
        XCTAssertEqual(h.waitFor(count: 4).last, ["jsonrpc": "2.0", "id": 4, "result": "used"], "nothing pending: answered at once")
    }

    func testUsesGoPastAPendingAddWhileChangesWaitForIt() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slowUse","id":1}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"add","id":2}"#)
        usleep(50_000)
        XCTAssertEqual(h.gate.current.count, 1, "the add waits for the earlier use")
        h.releaseSlow()
        XCTAssertEqual(h.waitFor(count: 1), [["jsonrpc": "2.0", "id": 1, "result": "slowly used"]])
        h.waitForSlowStarted(1)  // the add is waiting (for a person)
        h.send(#"{"jsonrpc":"2.0","method":"use","id":3}"#)
        XCTAssertEqual(h.waitFor(count: 2).last, ["jsonrpc": "2.0", "id": 3, "result": "used"], "a use does not wait for the add")
        h.send(#"{"jsonrpc":"2.0","method":"change","id":4}"#)
        h.send(#"{"jsonrpc":"2.0","method":"use","id":5}"#)
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 2, "the change waits for the add, and the use behind it for the change")
        h.releaseSlow()
        h.waitForSlowStarted(1)
        h.releaseSlow()
        let ids = h.waitFor(count: 5).compactMap { $0["id"]?.intValue }
        XCTAssertEqual(ids, [1, 3, 2, 4, 5])
    }

    func testAChangeWaitsForEarlierUsesWhichRunBesideEachOther() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slowUse","id":1}"#)
        h.send(#"{"jsonrpc":"2.0","method":"slowUse","id":2}"#)
        h.waitForSlowStarted(2)  // both started: uses do not wait for each other
        h.send(#"{"jsonrpc":"2.0","method":"change","id":3}"#)
        usleep(50_000)
        XCTAssertEqual(h.gate.current.count, 2, "the change has not started")
        h.releaseSlow()
        h.waitForSlowStarted(1)
        h.releaseSlow()
        let ids = h.waitFor(count: 3).compactMap { $0["id"]?.intValue }
        XCTAssertEqual(ids.last, 3, "the change is answered after the uses: \(ids)")
    }

    func testCancelledNotifiedAndBatchedChangesStillReleaseLaterUses() {
        let h = Harness()
        // Cancelled while working: answered -32800 at once; later uses go once its task has ended.
        h.send(#"{"jsonrpc":"2.0","method":"change","id":"c"}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}}"#)
        h.send(#"{"jsonrpc":"2.0","method":"use","id":"u1"}"#)
        XCTAssertEqual(h.waitFor(count: 1).first?["id"], "c")
        h.releaseSlow()
        XCTAssertEqual(h.waitFor(count: 2).last, ["jsonrpc": "2.0", "id": "u1", "result": "used"])

        // As a notification: no answer, but it still holds the key while it works.
        h.send(#"{"jsonrpc":"2.0","method":"change"}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"use","id":"u2"}"#)
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 2)
        h.releaseSlow()
        XCTAssertEqual(h.waitFor(count: 3).last, ["jsonrpc": "2.0", "id": "u2", "result": "used"])

        // In a batch: members are ordered like lone requests.
        h.send(#"[{"jsonrpc":"2.0","method":"change","id":"b1"},{"jsonrpc":"2.0","method":"use","id":"b2"}]"#)
        h.waitForSlowStarted(1)
        h.releaseSlow()
        let batch = h.waitFor(count: 4).last?.arrayValue ?? []
        XCTAssertEqual(Set(batch.compactMap { $0["id"]?.stringValue }), ["b1", "b2"])
    }

    /// A request still waiting for an earlier one when it is cancelled never runs.
    func testARequestCancelledWhileWaitingNeverRuns() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"change","id":1}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"change","id":2}"#)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}"#)
        XCTAssertEqual(h.waitFor(count: 1).first?["error"]?["code"], -32800)
        h.releaseSlow()
        XCTAssertEqual(h.waitFor(count: 2).last, ["jsonrpc": "2.0", "id": 1, "result": "changed"])
        usleep(100_000)
        XCTAssertEqual(h.gate.current.count, 0, "the cancelled change never started its work")
    }

    private func waitUntil(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    func testCancellationAnswersExactlyOnce() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slow","id":"c"}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"c"}}"#)
        XCTAssertEqual(h.waitFor(count: 1), [["jsonrpc": "2.0", "id": "c", "error": ["code": -32800, "message": "Request cancelled"]]])
        h.releaseSlow()
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":"after"}"#)
        let all = h.waitFor(count: 2)
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 2, "the cancelled request was answered twice: \(h.messages)")
        XCTAssertEqual(all.last?["id"], "after")
    }

    func testBatchWithSlowMembersAnswersOnceAsAnArray() {
        let h = Harness()
        h.send(#"[{"jsonrpc":"2.0","method":"slow","id":1},{"jsonrpc":"2.0","method":"fast","id":2},{"jsonrpc":"2.0","method":"slow"}]"#)
        h.waitForSlowStarted(2)
        XCTAssertEqual(h.messages.count, 0)
        h.releaseSlow()
        let answer = h.waitFor(count: 1)
        XCTAssertEqual(answer.count, 1)
        XCTAssertEqual(Set(answer[0].arrayValue ?? []), [["jsonrpc": "2.0", "id": 1, "result": "slow"], ["jsonrpc": "2.0", "id": 2, "result": "fast"]])
    }

    func testCancellingABatchMemberAnswersItInTheBatch() {
        let h = Harness()
        defer { h.releaseSlow() }
        h.send(#"[{"jsonrpc":"2.0","method":"slow","id":"b1"},{"jsonrpc":"2.0","method":"fast","id":"b2"}]"#)
        h.waitForSlowStarted(1)
        XCTAssertEqual(h.messages.count, 0)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b1"}}"#)
        let answer = h.waitFor(count: 1)
        XCTAssertEqual(answer.count, 1, "the batch is answered once its waiting member is cancelled")
        XCTAssertEqual(Set(answer.first?.arrayValue ?? []), [["jsonrpc": "2.0", "id": "b1", "error": ["code": -32800, "message": "Request cancelled"]],
                                                            ["jsonrpc": "2.0", "id": "b2", "result": "fast"]])
        h.releaseSlow()
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":"after"}"#)
        XCTAssertEqual(h.waitFor(count: 2).last?["id"], "after", "the cancelled member is not answered again")
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 2)
    }

    func testABatchWaitsForItsOtherMembersAfterACancellation() {
        let h = Harness()
        h.send(#"[{"jsonrpc":"2.0","method":"slow","id":"b1"},{"jsonrpc":"2.0","method":"slow","id":"b2"}]"#)
        h.waitForSlowStarted(2)
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"b1"}}"#)
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 0, "b2 is still working")
        h.releaseSlow()
        let answer = h.waitFor(count: 1)
        XCTAssertEqual(Set(answer.first?.arrayValue ?? []), [["jsonrpc": "2.0", "id": "b1", "error": ["code": -32800, "message": "Request cancelled"]],
                                                            ["jsonrpc": "2.0", "id": "b2", "result": "slow"]])
    }

    func testAnIdStillInFlightIsRejectedAtOnce() {
        let h = Harness()
        defer { h.releaseSlow() }
        let inUse: JSONValue = ["code": -32600, "message": #"Invalid Request: id "dup" is in use by a request still in flight"#]
        h.send(#"{"jsonrpc":"2.0","method":"slow","id":"dup"}"#)
        h.waitForSlowStarted(1)
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":"dup"}"#)
        h.send(#"{"jsonrpc":"2.0","method":"slow","id":"dup"}"#)
        XCTAssertEqual(h.waitFor(count: 2), [["jsonrpc": "2.0", "id": "dup", "error": inUse], ["jsonrpc": "2.0", "id": "dup", "error": inUse]])
        XCTAssertEqual(h.gate.current.count, 1, "the duplicate's work never started")
        h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"dup"}}"#)
        XCTAssertEqual(h.waitFor(count: 3).last, ["jsonrpc": "2.0", "id": "dup", "error": ["code": -32800, "message": "Request cancelled"]])
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":"dup"}"#)
        XCTAssertEqual(h.waitFor(count: 4).last, ["jsonrpc": "2.0", "id": "dup", "result": "fast"], "the id is free once answered")
        usleep(50_000)
        XCTAssertEqual(h.messages.count, 4, "one cancellation answer: \(h.messages)")
    }

    func testAnIdInFlightInTheSameBatchIsRejected() {
        let h = Harness()
        h.send(#"[{"jsonrpc":"2.0","method":"slow","id":7},{"jsonrpc":"2.0","method":"slow","id":7}]"#)
        h.waitForSlowStarted(1)
        h.releaseSlow()
        let answer = h.waitFor(count: 1)
        XCTAssertEqual(Set(answer.first?.arrayValue ?? []), [["jsonrpc": "2.0", "id": 7, "result": "slow"],
                                                            ["jsonrpc": "2.0", "id": 7, "error": ["code": -32600, "message": "Invalid Request: id 7 is in use by a request still in flight"]]])
    }

    func testApplicationErrorsAndUnexpectedFailures() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"fails","id":1}"#)
        h.send(#"{"jsonrpc":"2.0","method":"crashes","id":2}"#)
        let m = h.waitFor(count: 2)
        XCTAssertEqual(m[0], ["jsonrpc": "2.0", "id": 1, "error": ["code": 1001, "message": "Not logged in.", "data": ["reason": "notLoggedIn"]]])
        XCTAssertEqual(m[1], ["jsonrpc": "2.0", "id": 2, "error": ["code": -32603, "message": "Internal error: the agent failed unexpectedly"]])
    }

    func testBatchCap() {
        var options = RPCConnection.Options()
        options.maxBatch = 3
        let h = Harness(options: options)
        let four = Array(repeating: #"{"jsonrpc":"2.0","method":"fast","id":1}"#, count: 4).joined(separator: ",")
        h.send("[\(four)]")
        XCTAssertEqual(h.waitFor(count: 1).first?["error"]?["code"], -32600)
    }

    func testFinishWaitsForInFlightWork() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slow","id":1}"#)
        h.waitForSlowStarted(1)
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { h.releaseSlow() }
        h.connection.finish()
        XCTAssertEqual(h.messages, [["jsonrpc": "2.0", "id": 1, "result": "slow"]])
        XCTAssertEqual(h.exits.current, [0])
    }

    func testFinishExitsWhileAWriteNeverReturns() {
        var options = RPCConnection.Options()
        options.shutdownGrace = 0.2
        options.finalFlushTimeout = 0.1
        // A host that stopped reading: a write that never returns (until the test ends).
        let stuck = DispatchSemaphore(value: 0)
        defer { for _ in 0..<2 { stuck.signal() } }
        let writing = Locked(false)
        let output = OutputSink(write: { _ in
            writing.withLock { $0 = true }
            stuck.wait()
            return true
        }, onClosed: {})
        let exits = Locked<[Int32]>([])
        let connection = RPCConnection(registry: MethodRegistry(), output: output, logger: Logger(level: .error, sink: { _ in }),
                                       options: options, onExit: { code in exits.withLock { $0.append(code) } })
        Array(#"{"jsonrpc":"2.0","method":"ping","id":1}"#.utf8).withUnsafeBufferPointer { connection.handleLine($0) }
        Array(#"{"jsonrpc":"2.0","method":"ping","id":2}"#.utf8).withUnsafeBufferPointer { connection.handleLine($0) }
        // Only now a writer gets stuck: the test thread itself must not queue behind it.
        DispatchQueue.global().async { output.flush() }
        XCTAssertTrue(waitUntil(timeout: 3) { writing.current }, "the writer started")
        DispatchQueue.global().async { connection.finish() }
        XCTAssertTrue(waitUntil(timeout: 3) { exits.current == [0] }, "finish() waited on a write that never returns")
    }

    func testNotificationWorkRunsButIsNeverAnswered() {
        let h = Harness()
        h.send(#"{"jsonrpc":"2.0","method":"slow"}"#)
        h.send(#"{"jsonrpc":"2.0","method":"fails"}"#)
        h.waitForSlowStarted(1)
        h.releaseSlow()
        h.send(#"{"jsonrpc":"2.0","method":"fast","id":"x"}"#)
        usleep(50_000)
        XCTAssertEqual(h.messages, [["jsonrpc": "2.0", "id": "x", "result": "fast"]])
    }
}
