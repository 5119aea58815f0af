import Foundation
import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// The engine's Unix-socket server in-process: a connection per host, `exit` ending one
/// connection only, a closing connection's request cancelled, `stop` answering what is in flight
/// and removing the socket file.
final class SocketServerTests: XCTestCase {
    private final class Fixture: @unchecked Sendable {
        let directory: URL
        let path: String
        let server: SocketServer
        let closed = Locked(0)
        let cancelled = Locked(0)
        let release = Locked<CheckedContinuation<Void, Never>?>(nil)

        init() throws {
            directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("sock-\(UUID().uuidString.prefix(8))")
            path = directory.appendingPathComponent("s").path
            try UnixSocket.prepareDirectory(of: path)
            var registry = MethodRegistry()
            registry.register(MethodDescriptor("wait", summary: "", result: nil)) { [release, cancelled] _ in
                .later {
                    await withTaskCancellationHandler {
                        await withCheckedContinuation { c in release.withLock { $0 = c } }
                    } onCancel: {
                        cancelled.withLock { $0 += 1 }
                        release.withLock { $0?.resume(); $0 = nil }
                    }
                    return "waited"
                }
            }
            var options = RPCConnection.Options()
            options.shutdownGrace = 0.5
            let listener = try UnixSocket.listen(at: path)
            let logger = Logger(level: .error, sink: { _ in })
            server = SocketServer(path: path, listener: listener, maxLineBytes: 1 << 16, logger: logger) { [closed, registry, options] output, onExit in
                RPCConnection(registry: registry, output: output, logger: logger, options: options, session: CountedSession(closed), onExit: onExit)
            }
            XCTAssertTrue(server.start())
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        func waitFor(_ condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(5)
            while !condition() && Date() < deadline { usleep(5_000) }
        }
    }

    /// Counts the connections whose session was told they closed.
    private final class CountedSession: HostSession {
        let count: Locked<Int>
        init(_ count: Locked<Int>) { self.count = count }
        func closed() { count.withLock { $0 += 1 } }
    }

    private func line(_ fd: Int32) -> String? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(fd, &byte, 1) == 1 {
            if byte == 0x0A { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(byte)
        }
        return nil
    }

    private func send(_ fd: Int32, _ text: String) {
        _ = (text + "\n").withCString { write(fd, $0, strlen($0)) }
    }

    func testExitEndsOneConnectionAndStopAnswersInFlightRequestsThenRemovesTheSocket() throws {
        let f = try Fixture()
        let a = try UnixSocket.connect(to: f.path, timeout: 5), b = try UnixSocket.connect(to: f.path, timeout: 5)
        defer { close(a); close(b) }
        send(a, #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        XCTAssertEqual(line(a), #"{"jsonrpc":"2.0","id":1,"result":{}}"#)
        send(a, #"{"jsonrpc":"2.0","method":"exit"}"# + "\n" + #"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        XCTAssertNil(line(a), "closed after exit; the ping behind it is not answered")
        f.waitFor { f.closed.current == 1 }
        XCTAssertEqual(f.server.openConnections, 1)

        send(b, #"{"jsonrpc":"2.0","id":"w","method":"wait"}"#)
        f.waitFor { f.release.current != nil }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { f.release.withLock { $0?.resume(); $0 = nil } }
        f.server.stop(timeout: 5)
        XCTAssertEqual(line(b), #"{"jsonrpc":"2.0","id":"w","result":"waited"}"#, "in flight at stop: answered")
        XCTAssertNil(line(b))
        XCTAssertEqual(f.server.openConnections, 0)
        XCTAssertEqual(f.closed.current, 2)
        XCTAssertFalse(FileManager.default.fileExists(atPath: f.path))
    }

    func testAClosedConnectionsRequestIsCancelledAfterTheGrace() throws {
        let f = try Fixture()
        let a = try UnixSocket.connect(to: f.path, timeout: 5)
        send(a, #"{"jsonrpc":"2.0","id":1,"method":"wait"}"#)
        f.waitFor { f.release.current != nil }
        close(a)
        f.waitFor { f.closed.current == 1 }
        XCTAssertEqual(f.cancelled.current, 1, "nobody is left to answer: the request is cancelled")
        XCTAssertEqual(f.server.openConnections, 0)
        f.server.stop(timeout: 1)
    }

    func testThePeerIsThisProcess() throws {
        let f = try Fixture()
        let a = try UnixSocket.connect(to: f.path, timeout: 5)
        defer { close(a) }
        XCTAssertEqual(UnixSocket.peer(of: a)?.uid, geteuid())
        XCTAssertEqual(UnixSocket.peer(of: a)?.pid, getpid())
        f.server.stop(timeout: 1)
    }
}
