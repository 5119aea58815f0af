#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Locking
import Logging

/// Serves the protocol on a listening Unix-domain socket: each accepted connection of this
/// user gets its own `RPCConnection` (its own lifecycle, requests and host session) over a
/// `SocketTransport`, served on a thread of its own by the engine's framing loop
/// (`RPCConnection.serve`). A connection of another user is closed before anything is read
/// from it or written to it.
///
/// A connection ends at end of input, a write to a peer that went away, or `exit` (which
/// ends that connection only): in-flight requests get `finish`'s grace, whatever still runs
/// is cancelled, the host's session is told (`HostSession.closed`), then the descriptor is
/// closed. The server itself ends on `stop` (the program's signal).
///
/// At most `maxConnections` are served at once: each costs a descriptor and a thread, and a
/// flood of idle connections (a forwarded socket reaches another machine) must not take the
/// descriptors the rest of the agent needs. One more is accepted and closed at once, so it
/// neither waits in the backlog nor keeps `accept` failing; refusals are logged at most every
/// 10 s. Out of descriptors all the same, the connection waiting is accepted on a descriptor
/// held in reserve and closed.
public final class SocketServer: @unchecked Sendable {
    public let path: String
    public let maxConnections: Int
    private let listener: Int32
    private let maxLineBytes: Int
    private let logger: Logger
    private let makeConnection: MakeConnection
    private let state = Locked(State())
    private let allClosed = DispatchSemaphore(value: 0)
    /// Touched by the accept thread only.
    private var spare: Int32 = -1
    private var refusals = Refusals()

    /// Refusals since the last line about them, and when that was (uptime nanoseconds).
    private struct Refusals {
        var unlogged = 0
        var loggedAt: UInt64?
    }

    private struct State {
        var open: [Int32: SocketTransport] = [:]
        var stopping = false
    }

    /// - Parameter listener: a listening socket at `path` (`UnixSocket.listen`).
    public init(path: String, listener: Int32, maxLineBytes: Int, maxConnections: Int = 512, logger: Logger,
                makeConnection: @escaping MakeConnection) {
        self.path = path
        self.maxConnections = max(1, maxConnections)
        self.listener = listener
        self.maxLineBytes = maxLineBytes
        self.logger = logger
        self.makeConnection = makeConnection
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
            for transport in s.open.values { transport.stopReading() }
        }
        shutdown(listener, Int32(SHUT_RDWR))  // wakes `accept` (Linux); the loop sees `stopping` either way
        let deadline = DispatchTime.now() + timeout
        while openConnections > 0 {
            if allClosed.wait(timeout: deadline) == .timedOut { break }
        }
    }

    private func acceptLoop() {
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { if spare >= 0 { close(spare) } }
        while true {
            let fd = accept(listener, nil, nil)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if state.current.stopping { return }
                if errno == EMFILE || errno == ENFILE {
                    refuseForWantOfDescriptors()
                    continue
                }
                logger.error("accept on \(path) failed: \(String(cString: strerror(errno)))")
                return
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            if openConnections >= maxConnections {
                close(fd)
                refused("it serves at most \(maxConnections) connections at once")
                continue
            }
            admit(fd)
        }
    }

    /// The reserve descriptor makes room to accept the waiting connection and close it; without
    /// one (taken meanwhile by another thread), a pause before trying again.
    private func refuseForWantOfDescriptors() {
        refused("the agent is out of file descriptors")
        if spare >= 0 {
            close(spare)
            let fd = accept(listener, nil, nil)
            if fd >= 0 { close(fd) }
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        } else {
            usleep(100_000)
            spare = open("/dev/null", O_RDONLY | O_CLOEXEC)
        }
    }

    /// One line for the first refusal, then at most one every 10 s counting those in between:
    /// a flood must not fill the log.
    private func refused(_ why: String) {
        let now = DispatchTime.now().uptimeNanoseconds
        refusals.unlogged += 1
        if let last = refusals.loggedAt, now - last < 10_000_000_000 { return }
        let count = refusals.unlogged
        refusals = Refusals(unlogged: 0, loggedAt: now)
        let which = count == 1 ? "a connection" : "\(count) connections"
        logger.warn("refused \(which) on \(path): \(why); refusals are logged at most every 10 s")
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
        let transport = SocketTransport(fd: fd)
        let admitted = state.withLock { s -> Bool in
            guard !s.stopping else { return false }
            s.open[fd] = transport
            return true
        }
        guard admitted else {
            close(fd)
            return
        }
        let output = OutputSink(transport: transport, onClosed: { transport.disconnect() })
        let connection = makeConnection(output, { _ in transport.disconnect() })
        logger.debug("connection from pid \(peer.pid.map(String.init) ?? "?") on \(path)")
        let limit = maxLineBytes
        let reading = DetachedThread.start {
            connection.serve(transport, maxLineBytes: limit)
            self.closed(transport)
        }
        if !reading {
            logger.warn("no thread for a new connection on \(path); closing it")
            transport.disconnect()
            connection.serve(transport, maxLineBytes: limit)  // reads nothing: it only closes
            closed(transport)
        }
    }

    /// Forgets a served connection and closes its descriptor.
    private func closed(_ transport: SocketTransport) {
        let last = state.withLock { s -> Bool in
            s.open[transport.fd] = nil
            close(transport.fd)
            return s.open.isEmpty
        }
        if last { allClosed.signal() }
    }
}
