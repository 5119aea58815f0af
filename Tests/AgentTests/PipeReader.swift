import Foundation

/// Reads a pipe on a thread of its own until its end or `stop()`, then closes its copy of it.
///
/// Not Foundation's `readabilityHandler`: that is a dispatch read source, which must be cancelled
/// (asynchronously) before its descriptor is closed. Removing the handler and closing the handle
/// right after — as a reader must, or every agent leaks its descriptors — raced the cancellation,
/// and a descriptor closed and reused under a live source crashed the whole test process in
/// libdispatch's event loop (`_dispatch_event_loop_drain`, seen in full `swift test` runs under
/// load). Here the reader owns a duplicate of the descriptor and is the only one to close it, so
/// nothing can close it under a read; the caller may close the original at any time.
final class PipeReader: @unchecked Sendable {
    private let fd: Int32
    private let lock = NSCondition()
    private var stopping = false
    private var ended = false

    /// - Parameters:
    ///   - onData: each chunk read, on the reader's thread, in order.
    ///   - onEnd: once, after the last chunk (end of the pipe, or `stop()`).
    init(_ handle: FileHandle, onData: @escaping @Sendable (Data) -> Void, onEnd: @escaping @Sendable () -> Void = {}) {
        fd = fcntl(handle.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        Thread.detachNewThread { [self] in
            read(onData)
            close(fd)
            onEnd()
            lock.lock()
            ended = true
            lock.broadcast()
            lock.unlock()
        }
    }

    private func read(_ onData: @Sendable (Data) -> Void) {
        guard fd >= 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            lock.lock()
            let stop = stopping
            lock.unlock()
            if stop { return }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            // A bounded wait, so that `stop()` is seen within 100 ms.
            let ready = poll(&p, 1, 100)
            if ready < 0 && errno == EINTR { continue }
            if ready < 0 { return }
            if ready == 0 { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                onData(Data(buffer[0..<n]))
            } else if n < 0 && (errno == EINTR || errno == EAGAIN) {
                continue
            } else {
                return  // end of the pipe, or an error
            }
        }
    }

    /// Waits (bounded) for the pipe's end; true when everything written to it has been delivered.
    @discardableResult
    func awaitEnd(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while !ended { if !lock.wait(until: deadline) { break } }
        return ended
    }

    /// Ends the reading within about 100 ms, whether or not the pipe has ended.
    func stop() {
        lock.lock()
        stopping = true
        lock.unlock()
    }
}
