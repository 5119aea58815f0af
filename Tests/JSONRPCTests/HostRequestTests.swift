import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// Requests from the agent to its host (`RPCConnection.request`), over the in-memory
/// transport: the host's answer — result or error — reaches the caller that waits for it;
/// a deadline, the connection's end and a cancellation each end the wait once.
final class HostRequestTests: XCTestCase {
    /// A connection whose `ask` asks the host `confirm` and answers with what the host said;
    /// when the host gave no answer, `ask` answers error 1 naming why and records it.
    private final class Fixture: Sendable {
        let host: MemoryHost
        let failures = Locked<[String]>([])

        init(timeout: Double = 5) {
            var registry = MethodRegistry()
            registry.register(MethodDescriptor("ask", summary: "", result: nil)) { [failures] call in
                .later {
                    do {
                        return try await call.connection.request("confirm", ["question": "proceed?"], timeout: timeout)
                    } catch let failure as HostRequestFailure {
                        failures.withLock { $0.append("\(failure)") }
                        throw RPCError(code: 1, message: "\(failure)")
                    } catch is CancellationError {
                        failures.withLock { $0.append("cancelled") }
                        throw CancellationError()
                    }
                }
            }
            host = MemoryTransport.serve { [registry] output, onExit in
                RPCConnection(registry: registry, output: output, logger: Logger(level: .error, sink: { _ in }), onExit: onExit)
            }
        }

        func send(_ message: JSONValue) { host.send(JSONSerializer.string(message)) }

        func next() -> JSONValue? { host.readLine(timeout: 5).flatMap { try? JSONParser.parse($0) } }

        func waitForFailures(_ n: Int) -> [String] {
            let deadline = Date().addingTimeInterval(5)
            while failures.current.count < n && Date() < deadline { usleep(2_000) }
            return failures.current
        }
    }

    private static let ask: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": "ask"]
    private static let confirm: JSONValue = ["jsonrpc": "2.0", "id": "agent-1", "method": "confirm", "params": ["question": "proceed?"]]

    func testTheHostsResultReachesTheCallerUnderAnIdOfTheAgentsOwn() {
        let f = Fixture()
        f.send(Self.ask)
        XCTAssertEqual(f.next(), Self.confirm)
        f.send(["jsonrpc": "2.0", "id": "agent-1", "result": ["answer": "yes"]])
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 1, "result": ["answer": "yes"]])
        f.send(["jsonrpc": "2.0", "id": 2, "method": "ask"])
        XCTAssertEqual(f.next()?["id"], "agent-2", "each request its own id")
        f.host.close()
    }

    func testTheHostsErrorIsThrownToTheCaller() {
        let f = Fixture()
        f.send(Self.ask)
        XCTAssertEqual(f.next(), Self.confirm)
        f.send(["jsonrpc": "2.0", "id": "agent-1", "error": ["code": 4001, "message": "The person said no.", "data": ["why": "busy"]]])
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 1, "error": ["code": 4001, "message": "The person said no.", "data": ["why": "busy"]]],
                       "the caller rethrew the host's error as it came")
        f.host.close()
    }

    func testAResponseThatAnswersNoRequestIsIgnored() {
        let f = Fixture()
        f.send(["jsonrpc": "2.0", "id": "agent-7", "result": true])
        f.send(["jsonrpc": "2.0", "id": 3, "result": true])
        f.send(["jsonrpc": "2.0", "id": 4, "method": "ping"])
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 4, "result": [:]], "nothing answered the responses")
        f.host.close()
    }

    func testNoAnswerWithinTheTimeoutFailsTheWaitAndALateAnswerIsIgnored() {
        let f = Fixture(timeout: 0.2)
        f.send(Self.ask)
        XCTAssertEqual(f.next(), Self.confirm)
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 1, "error": ["code": 1, "message": "timedOut"]])
        f.send(["jsonrpc": "2.0", "id": "agent-1", "result": "too late"])
        f.send(["jsonrpc": "2.0", "id": 5, "method": "ping"])
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 5, "result": [:]])
        XCTAssertEqual(f.failures.current, ["timedOut"])
        f.host.close()
    }

    func testTheEndOfTheConnectionFailsWhatWaitsAndWhatIsAskedAfter() {
        let f = Fixture()
        f.send(Self.ask)
        XCTAssertEqual(f.next(), Self.confirm)
        f.host.close()
        XCTAssertEqual(f.waitForFailures(1), ["closed"], "failed at the end of input, long before the 5 s timeout")
    }

    func testCancellingTheCallerEndsItsWait() {
        let f = Fixture()
        f.send(Self.ask)
        XCTAssertEqual(f.next(), Self.confirm)
        f.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 1]])
        XCTAssertEqual(f.next(), ["jsonrpc": "2.0", "id": 1, "error": ["code": -32800, "message": "Request cancelled"]])
        XCTAssertEqual(f.waitForFailures(1), ["cancelled"])
        f.host.close()
    }
}
