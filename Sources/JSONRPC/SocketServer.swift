#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Locking
import Logging

/// Serves the protocol on a listening Unix-domain socket: each accepted connection of this
/// user gets its own `RPCConnection` (its own lifecycle, requests and host state) and its own
/// reader thread, framed and flushed as `StdioServer` does stdin. A connection of another
/// user is closed before anything is read from it or written to it.
///
/// A connection ends at end of input, a write to a peer that went away, or `exit` (which
/// ends that connection only): in-flight requests get `finish`'s grace, whatever still runs
/// is cancelled, then the descriptor is closed and `Session.closed` frees the host state.
public final class SocketServer: @unchecked Sendable {
    /// One connection as the program serves it.
    public struct Session: Sendable {
        public let connection: RPCConnection
        /// Frees what the program keeps for this connection; runs once, after its last answer.
        public let closed: @Sendable () -> Void

        public init(connection: RPCConnection, closed: @escaping @Sendable () -> Void) {
            self.connection = connection
            self.closed = closed
        }
    }

    /// Builds a connection's session over its output; the connection must call `onExit` from `finish`.
    public typealias MakeSession = @Sendable (_ output: OutputSink, _ onExit: @escaping @Sendable (Int32) -> Void) -> Session

    public let path: String
    private let listener: Int32
    private let maxLineBytes: Int
    private let logger: Logger
    private let makeSession: MakeSession
    private let state = Locked(State())
    private let allClosed = DispatchSemaphore(value: 0)

    private struct State {
        var open: [Int32: Peer] = [:]
        var stopping = false
    }

    /// One accepted connection's descriptor, and whether it has been hung up.
    private final class Peer: @unchecked Sendable {
        let fd: Int32
        private let hungUp = Locked(false)
        init(fd: Int32) { self.fd = fd }

        /// Ends the connection in both directions: the reader sees end of input.
        func hangUp() {
            if hungUp.withLock({ h in defer { h = true }; return h }) { return }
            shutdown(fd, Int32(SHUT_RDWR))
        }

        /// Ends input only, so the answers to requests already read can still be written.
        func stopReading() { shutdown(fd, Int32(SHUT_RD)) }

        var isHungUp: Bool { hungUp.current }
    }

    /// - Parameter listener: a listening socket at `path` (`UnixSocket.listen`).
    public init(path: String, listener: Int32, maxLineBytes: Int, logger: Logger, makeSession: @escaping MakeSession) {
        self.path = path
        self.listener = listener
        self.maxLineBytes = maxLineBytes
        self.logger = logger
        self.makeSession = makeSession
    }

    /// How many connections are open (served, not yet closed).
    public var openConnections: Int { state.current.open.count }

    /// Starts accepting on a thread of its own; false when the system refuses the thread.
    public func start() -> Bool {
        signal(SIGPIPE, SIG_IGN)  // a peer that went away is EPIPE on its connection, not the agent's end
        return DetachedThread.start { self.acceptLoop() }
    }

    /// Stops accepting and removes the socket file, then lets every open connection finish as
    /// at end of input (in-flight requests answered within their grace); returns once all are
    /// closed or `timeout` seconds have passed.
    public func stop(timeout: Double) {
        unlink(path)
        // Under the lock, as a connection's descriptor is closed under it: the number cannot be another's yet.
        state.withLock { s in
            s.stopping = true
            for peer in s.open.values { peer.stopReading() }
        }
        shutdown(listener, Int32(SHUT_RDWR))  // wakes `accept` (Linux); the loop sees `stopping` either way
        let deadline = DispatchTime.now() + timeout
        while openConnections > 0 {
            if allClosed.wait(timeout: deadline) == .timedOut { break }
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.current.stopping { return }
                if errno == EMFILE || errno == ENFILE {
                    logger.warn("cannot accept a connection on \(path): out of file descriptors")
                    usleep(100_000)
                    continue
                }
                logger.error("accept on \(path) failed: \(String(cString: strerror(errno)))")
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            admit(fd)
        }
    }

    /// Checks the peer's user before anything else, then serves the connection.
    private func admit(_ fd: Int32) {
        guard let peer = UnixSocket.peer(of: fd) else {
            logger.warn("refused a connection on \(path): its peer's credentials are unknown")
            close(fd)
            return
        }
        guard peer.uid == geteuid() else {
            logger.warn("refused a connection on \(path) from uid \(peer.uid)\(peer.pid.map { " (pid \($0))" } ?? ""): only uid \(geteuid()) may use this agent")
            close(fd)
            return
        }
        let connection = Peer(fd: fd)
        let admitted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.open[fd] = connection
            return true
        }
        guard admitted else {
            close(fd)
            return
        }
        let output = OutputSink(write: { SystemCalls.writeAll(fd, $0) }, onClosed: { connection.hangUp() })
        let session = makeSession(output, { _ in connection.hangUp() })
        logger.debug("connection from pid \(peer.pid.map(String.init) ?? "?") on \(path)")
        let reading = DetachedThread.start { self.serve(connection, session, output) }
        if !reading {
            logger.warn("no thread for a new connection on \(path); closing it")
            connection.hangUp()
            closed(connection, session, output)
        }
    }

    /// The connection's reader: frames lines, dispatches them, flushes once per read.
    private func serve(_ peer: Peer, _ session: Session, _ output: OutputSink) {
        let connection = session.connection
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        let capacity = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let limit = maxLineBytes
        // After `exit` the connection is over: the rest of that read is not served.
        let handle: (LineFramer.Event) -> Void = { event in
            guard !peer.isHungUp else { return }
            switch event {
            case .line(let line): connection.handleLine(line)
            case .oversized: connection.handleOversizedLine(limit: limit)
            }
        }
        while true {
            let n = read(peer.fd, buffer, capacity)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            framer.feed(UnsafeBufferPointer(start: buffer, count: n), handle)
            output.flush()
        }
        framer.finish(handle)
        output.flush()
        closed(peer, session, output)
    }

    private func closed(_ peer: Peer, _ session: Session, _ output: OutputSink) {
        session.connection.finish()  // in-flight requests answered within the grace; a no-op after `exit`
        session.connection.cancelInFlight()
        output.close()
        session.closed()
        let last = state.withLock { s -> Bool in
            s.open[peer.fd] = nil
            close(peer.fd)
            return s.open.isEmpty
        }
        if last { allClosed.signal() }
    }
}
