import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// The in-memory transport serves a connection as a socket's is served: lines in, answers
/// out, `exit` or the host's close ending it, and its session told once it has.
final class MemoryTransportTests: XCTestCase {
    private final class Session: HostSession {
        let closedCount = Locked(0)
        func closed() { closedCount.withLock { $0 += 1 } }

        func waitUntilClosed() -> Int {
            let deadline = Date().addingTimeInterval(5)
            while closedCount.current == 0 && Date() < deadline { usleep(2_000) }
            return closedCount.current
        }
    }

    private func serve(_ session: Session) -> MemoryHost {
        var registry = MethodRegistry()
        registry.register(MethodDescriptor("echo", summary: "", params: [.init("text")], result: nil)) { call in
            .result(call.params["text"] ?? .null)
        }
        return MemoryTransport.serve { [registry] output, onExit in
            RPCConnection(registry: registry, output: output, logger: Logger(level: .error, sink: { _ in }), session: session, onExit: onExit)
        }
    }

    func testLinesInAnswersOutAndExitEndsTheConnectionWithoutServingWhatFollows() {
        let session = Session()
        let host = serve(session)
        host.send(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi"}}"#)
        XCTAssertEqual(host.readLine(timeout: 5), #"{"jsonrpc":"2.0","id":1,"result":"hi"}"#)
        host.send(#"{"jsonrpc":"2.0","method":"exit"}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        XCTAssertNil(host.readLine(timeout: 5), "ended by exit; the ping behind it is not answered")
        XCTAssertEqual(session.waitUntilClosed(), 1)
        XCTAssertFalse(host.send(#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#), "nobody reads any more")
    }

    func testTheHostClosingEndsTheConnectionAndItsSession() {
        let session = Session()
        let host = serve(session)
        host.send(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        XCTAssertEqual(host.readLine(timeout: 5), #"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        host.close()
        XCTAssertEqual(session.waitUntilClosed(), 1)
    }
}
