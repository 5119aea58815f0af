#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A local process playing against the browser-login callback: it connects to
/// 127.0.0.1:`port` and sends the start of a request one byte at a time, every
/// `interval` seconds, never finishing it, until `stop()` (bounded by `limit`).
public final class SlowClient: @unchecked Sendable {
    private let fd: Int32
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    public init(port: UInt16, interval: TimeInterval = 0.5, limit: TimeInterval = 60) throws {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        self.fd = fd
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw CocoaError(.fileReadUnknown)
        }
        let stopped = self.stopped
        let finished = self.finished
        Thread.detachNewThread {
            let bytes = Array("GET /callback?state=".utf8) + Array(repeating: UInt8(ascii: "x"), count: 10_000)
            let end = Date().addingTimeInterval(limit)
            for byte in bytes {
                var b = byte
                #if canImport(Glibc)
                let sent = send(fd, &b, 1, Int32(MSG_NOSIGNAL))
                #else
                let sent = send(fd, &b, 1, 0)
                #endif
                if sent != 1 || Date() >= end || stopped.wait(timeout: .now() + interval) == .success { break }
            }
            finished.signal()
        }
    }

    /// Stops sending and closes the connection.
    public func stop() {
        stopped.signal()
        finished.wait()
        close(fd)
    }
}
