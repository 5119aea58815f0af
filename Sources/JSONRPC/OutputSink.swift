#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import JSON
import Locking

/// Where protocol messages go: one line each, written whole.
///
/// Every message is appended under one lock, so answers produced concurrently
/// never interleave. Answers computed on the reader thread are buffered and
/// flushed once per read (many messages, one `write`), which is what makes
/// pipelined throughput cheap; answers from tasks flush at once.
public final class OutputSink: @unchecked Sendable {
    private let lock = Lock()
    private var buffer: [UInt8] = []
    private let write: (UnsafeRawBufferPointer) -> Bool
    private let onClosed: @Sendable () -> Void
    private var closed = false

    /// - Parameters:
    ///   - write: writes all bytes or returns false when the reader has gone away.
    ///   - onClosed: called once when the host stops reading (EPIPE).
    public init(write: @escaping (UnsafeRawBufferPointer) -> Bool, onClosed: @escaping @Sendable () -> Void) {
        self.write = write
        self.onClosed = onClosed
        buffer.reserveCapacity(64 * 1024)
    }

    /// Appends one message built in place by `build`, followed by a newline.
    public func enqueue(_ build: (inout [UInt8]) -> Void) {
        lock.lock()
        build(&buffer)
        buffer.append(0x0A)
        lock.unlock()
    }

    public func enqueue(_ message: JSONValue) {
        enqueue { JSONSerializer.write(message, to: &$0) }
    }

    /// Enqueues and flushes: for messages produced off the reader thread.
    public func send(_ message: JSONValue) {
        send { JSONSerializer.write(message, to: &$0) }
    }

    /// Enqueues one message built in place and flushes.
    public func send(_ build: (inout [UInt8]) -> Void) {
        lock.lock()
        build(&buffer)
        buffer.append(0x0A)
        flushLocked()
        lock.unlock()
    }

    public func flush() {
        lock.lock()
        flushLocked()
        lock.unlock()
    }

    /// Flushes, or gives up at `deadline`; false when it gave up. For the exit
    /// path: a host that stopped reading must not keep the process alive, and a
    /// write(2) blocked on a full pipe cannot be interrupted, so the flush runs
    /// on another thread and is abandoned — still blocked — when time is up.
    @discardableResult
    public func flush(before deadline: DispatchTime) -> Bool {
        // The usual exit: nothing left to write and no write under way. Answering that
        // here spares starting a thread at every exit (0.5 ms of a cold start, under load).
        if lock.tryLock() {
            let idle = buffer.isEmpty
            lock.unlock()
            if idle { return true }
        }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            self.flush()
            done.signal()
        }
        return done.wait(timeout: deadline) == .success
    }

    /// Drops whatever is queued or sent from now on: the descriptor is about to be closed, and
    /// its number may be reused by another connection that must never see these answers.
    public func close() {
        lock.lock()
        closed = true
        buffer.removeAll()
        lock.unlock()
    }

    private func flushLocked() {
        guard !buffer.isEmpty else { return }
        if closed {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        let ok = buffer.withUnsafeBytes { write($0) }
        buffer.removeAll(keepingCapacity: true)
        if !ok {
            closed = true
            onClosed()
        }
    }
}

enum SystemCalls {
    static func write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.write(fd, p, n)
        #else
        return Darwin.write(fd, p, n)
        #endif
    }

    /// Writes all of `bytes`, through partial writes and `EINTR`, waiting in
    /// `poll` when the descriptor is non-blocking and full; false on any other error.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    waitUntilReady(fd, for: Int16(POLLOUT))
                    continue
                }
                return false
            }
            offset += n
        }
        return true
    }

    /// Waits until a non-blocking descriptor is ready for `events` (or in
    /// error, which the next read or write reports), instead of spinning on
    /// `EAGAIN`.
    static func waitUntilReady(_ fd: Int32, for events: Int16) {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        while poll(&entry, 1, -1) < 0 && errno == EINTR {}
    }

    /// `waitUntilReady` for at most `timeout` seconds; false when they passed first
    /// (or a signal interrupted the wait: the caller looks at the time again). A
    /// descriptor `poll` refuses counts as ready: the read or write reports why.
    static func waitUntilReady(_ fd: Int32, for events: Int16, timeout: Double) -> Bool {
        var entry = pollfd(fd: fd, events: events, revents: 0)
        let n = poll(&entry, 1, Int32(min((timeout * 1000).rounded(.up), 3_600_000)))
        return n > 0 || (n < 0 && errno != EINTR)
    }
}
