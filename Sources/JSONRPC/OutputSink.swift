#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON

/// Where protocol messages go: one line each, written whole.
///
/// Every message is appended under one lock, so answers produced concurrently
/// never interleave. Answers computed on the reader thread are buffered and
/// flushed once per read (many messages, one `write`), which is what makes
/// pipelined throughput cheap; answers from tasks flush at once.
public final class OutputSink: @unchecked Sendable {
    private let lock = NSLockLike()
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

    /// A sink over a file descriptor (stdout in the agent).
    public convenience init(fileDescriptor fd: Int32, onClosed: @escaping @Sendable () -> Void) {
        self.init(write: { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = SystemCalls.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR || errno == EAGAIN { continue }
                    return false
                }
                offset += n
            }
            return true
        }, onClosed: onClosed)
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

/// A pthread mutex: cheaper than NSLock on the hot path and free of Foundation.
final class NSLockLike: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }
}

enum SystemCalls {
    static func write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
        #if canImport(Glibc)
        return Glibc.write(fd, p, n)
        #else
        return Darwin.write(fd, p, n)
        #endif
    }
}
