#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A socket system call that failed, with its `errno`.
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    public let operation: String
    public let errno: Int32

    public var description: String { "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// The POSIX socket calls a loopback HTTP listener needs — the dev issuer's
/// server and the agent's browser-login redirect target — with the platform
/// differences (constant types, SIGPIPE suppression, close-on-exec) kept in one place.
///
/// Every descriptor is close-on-exec: the agent spawns helper processes (a
/// browser, say), and an inherited listener would keep the port bound after it closed.
public enum LoopbackSocket {
    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif

    public enum ReceiveResult {
        case data(Int)
        case closed
    }

    /// A listening socket bound to 127.0.0.1 and the port it actually got.
    public static func makeListener(port: UInt16, backlog: Int32 = 128) throws(SocketError) -> (fd: Int32, port: UInt16) {
        let fd = try makeSocket()
        setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
        guard withLoopbackAddress(port: port, { bind(fd, $0, $1) }) == 0 else { throw failure("bind", closing: fd) }
        guard listen(fd, backlog) == 0 else { throw failure("listen", closing: fd) }

        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw failure("getsockname", closing: fd) }
        return (fd, UInt16(bigEndian: actual.sin_port))
    }

    /// A connection to 127.0.0.1:`port`, send and receive bounded by `timeoutMilliseconds` each.
    public static func connectLoopback(port: UInt16, timeoutMilliseconds: Int) throws(SocketError) -> Int32 {
        let fd = try makeSocket()
        setReceiveTimeout(fd, milliseconds: timeoutMilliseconds)
        setSendTimeout(fd, milliseconds: timeoutMilliseconds)
        guard withLoopbackAddress(port: port, { connect(fd, $0, $1) }) == 0 else { throw failure("connect", closing: fd) }
        return fd
    }

    /// A pipe used to wake a thread blocked in `poll`.
    public static func makeWakePipe() throws(SocketError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(operation: "pipe", errno: errno) }
        setCloseOnExec(fds[0])
        setCloseOnExec(fds[1])
        return (fds[0], fds[1])
    }

    /// Blocks until one of `fds` is readable, or `timeoutMilliseconds` pass
    /// (-1: no limit); returns which ones are readable (by index).
    public static func waitReadable(_ fds: [Int32], timeoutMilliseconds: Int32 = -1) -> [Bool] {
        var polled = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        while true {
            let rc = poll(&polled, nfds_t(polled.count), timeoutMilliseconds)
            if rc >= 0 { break }
            if errno != EINTR {
                usleep(10_000)  // resource trouble: let the caller retry without spinning
                break
            }
        }
        return polled.map { $0.revents != 0 }
    }

    /// Accepts one connection; `nil` on a transient failure the caller should retry.
    public static func acceptConnection(_ listener: Int32) -> Int32? {
        let fd = accept(listener, nil, nil)
        guard fd >= 0 else {
            if errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM {
                usleep(10_000)  // out of descriptors: back off instead of spinning
            }
            return nil
        }
        setCloseOnExec(fd)
        #if canImport(Darwin)
        setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
        #endif
        setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return fd
    }

    public static func setReceiveTimeout(_ fd: Int32, milliseconds: Int) {
        setTimeout(fd, SO_RCVTIMEO, milliseconds: milliseconds)
    }

    public static func setSendTimeout(_ fd: Int32, milliseconds: Int) {
        setTimeout(fd, SO_SNDTIMEO, milliseconds: milliseconds)
    }

    /// Reads whatever is available (up to `capacity` bytes) onto the end of `buffer`.
    /// A timeout, reset or EOF all read as `.closed`: the connection is finished either way.
    public static func receive(_ fd: Int32, into buffer: inout [UInt8], capacity: Int = 64 * 1024) -> ReceiveResult {
        // Into scratch memory, then only the bytes read onto `buffer`: growing `buffer` by `capacity`
        // zeros first costs one generic step per byte in debug builds (~64 K per call).
        while true {
            let n = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { chunk in
                let n = recv(fd, chunk.baseAddress!, capacity, 0)
                if n > 0 { buffer.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[..<n])) }
                return n
            }
            if n > 0 { return .data(n) }
            if n < 0, errno == EINTR { continue }
            return .closed
        }
    }

    /// Writes all of `bytes`; `false` when the peer is gone or too slow to read.
    public static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { raw in
                send(fd, raw.baseAddress! + offset, bytes.count - offset, sendFlags)
            }
            if n > 0 {
                offset += n
            } else if n < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }

    /// Half-closes our side so the peer sees EOF while we can still read what it sends.
    public static func shutdownWrite(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Wakes any thread blocked on `fd` without releasing the descriptor number,
    /// so it is safe to call from another thread than the owner.
    public static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    public static func closeDescriptor(_ fd: Int32) {
        _ = close(fd)
    }

    public static func writeByte(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = write(fd, &byte, 1)
    }

    private static func failure(_ operation: String, closing fd: Int32) -> SocketError {
        let code = errno
        _ = close(fd)
        return SocketError(operation: operation, errno: code)
    }

    /// A TCP socket, close-on-exec, that (on Darwin) raises no SIGPIPE.
    private static func makeSocket() throws(SocketError) -> Int32 {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", errno: errno) }
        setCloseOnExec(fd)
        #if canImport(Darwin)
        setOption(fd, SOL_SOCKET, SO_NOSIGPIPE, 1)
        #endif
        return fd
    }

    /// Calls `body` (bind or connect) with 127.0.0.1:`port` as a `sockaddr` and its length.
    private static func withLoopbackAddress(port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    private static func setCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
    }

    private static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    private static func setTimeout(_ fd: Int32, _ name: Int32, milliseconds: Int) {
        var tv = timeval()
        tv.tv_sec = milliseconds / 1000
        tv.tv_usec = suseconds_t((milliseconds % 1000) * 1000)
        _ = setsockopt(fd, SOL_SOCKET, name, &tv, socklen_t(MemoryLayout<timeval>.size))
    }
}
