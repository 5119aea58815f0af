#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// A connected socket as a transport: one connection `SocketServer` accepted. Blocking reads
/// on the connection's own thread; a disconnect shuts the socket down, which wakes that read.
public final class SocketTransport: Transport, Sendable {
    let fd: Int32
    private let hungUp = Locked(false)

    init(fd: Int32) { self.fd = fd }

    public func receive(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        while true {
            let n = read(fd, buffer.baseAddress, buffer.count)
            if n < 0 && errno == EINTR { continue }
            return max(n, 0)
        }
    }

    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool { SystemCalls.writeAll(fd, bytes) }

    /// Ends the connection in both directions: the reader sees end of input.
    public func disconnect() {
        if hungUp.withLock({ h in defer { h = true }; return h }) { return }
        shutdown(fd, Int32(SHUT_RDWR))
    }

    public var isDisconnected: Bool { hungUp.current }

    /// Ends input only, so the answers to requests already read can still be written.
    func stopReading() { shutdown(fd, Int32(SHUT_RD)) }
}
