#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Locking
import Wire

/// A small blocking HTTP/1.1 server on 127.0.0.1: one thread accepts, one
/// thread per connection reads requests, asks the handler and writes answers.
///
/// Threads rather than an event loop because the load is a handful of test
/// clients and a blocking design makes injected latency and dropped
/// connections trivial to express. Keep-alive and pipelining work (bytes past
/// one request stay buffered for the next); bodies need `Content-Length`.
final class HTTPServer: Sendable {
    /// What the handler wants done with a request.
    enum Outcome: Sendable {
        case respond(HTTPResponse)
        /// Close the connection without answering (fault injection).
        case drop
    }

    typealias Handler = @Sendable (HTTPRequest) -> Outcome

    /// Head plus body; larger requests are answered 413.
    static let maxRequestBytes = 1 << 20
    /// Idle keep-alive connections are closed after this long.
    static let idleTimeoutMilliseconds = 60_000
    /// Connections beyond this are closed on accept, so a runaway client cannot exhaust threads.
    static let maxConnections = 256

    let port: UInt16
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let handler: Handler
    private let registry = Locked(Registry())
    private let acceptLoopFinished = DispatchSemaphore(value: 0)

    private struct Registry {
        var stopping = false
        var open: Set<Int32> = []
    }

    /// Binds 127.0.0.1:`port` (0 = ephemeral) and starts accepting. `makeHandler`
    /// receives the bound port, which handlers need to name their own URLs.
    init(port: UInt16, makeHandler: (UInt16) -> Handler) throws(DevIssuerError) {
        let bound: (fd: Int32, port: UInt16)
        let pipe: (read: Int32, write: Int32)
        do throws(SocketError) {
            bound = try LoopbackSocket.makeListener(port: port)
            do throws(SocketError) {
                pipe = try LoopbackSocket.makeWakePipe()
            } catch {
                LoopbackSocket.closeDescriptor(bound.fd)
                throw error
            }
        } catch {
            throw .socket(operation: error.operation, errno: error.errno)
        }
        self.listener = bound.fd
        self.port = bound.port
        self.wake = pipe
        self.handler = makeHandler(bound.port)
        guard DetachedThread.start({ [self] in acceptLoop() }) else {
            for fd in [listener, wake.read, wake.write] { LoopbackSocket.closeDescriptor(fd) }
            // EAGAIN: the one failure of pthread_create with valid attributes that is not a permission.
            throw .socket(operation: "pthread_create", errno: EAGAIN)
        }
    }

    /// Stops accepting, closes open connections and returns once the listening
    /// socket is closed (so the port can be bound again). Idempotent.
    func stop() {
        let first = registry.withLock { registry -> Bool in
            guard !registry.stopping else { return false }
            registry.stopping = true
            // Shut down under the lock: a connection thread removes its descriptor
            // under the same lock before closing it, so the number cannot be reused here.
            for fd in registry.open { LoopbackSocket.shutdownBoth(fd) }
            return true
        }
        guard first else { return }
        LoopbackSocket.writeByte(wake.write)
        _ = acceptLoopFinished.wait(timeout: .now() + 5)
    }

    private var isStopping: Bool { registry.withLock { $0.stopping } }

    private func acceptLoop() {
        while true {
            let ready = LoopbackSocket.waitReadable([listener, wake.read])
            // Exit only on the wake byte: `stop()` writes it after setting `stopping`, and
            // the pipe must stay open until then or the write could hit a reused descriptor.
            if ready[1] { break }
            guard ready[0], let fd = LoopbackSocket.acceptConnection(listener) else { continue }
            let admitted = registry.withLock { registry -> Bool in
                guard !registry.stopping, registry.open.count < HTTPServer.maxConnections else { return false }
                registry.open.insert(fd)
                return true
            }
            guard admitted else {
                LoopbackSocket.closeDescriptor(fd)
                continue
            }
            if !DetachedThread.start({ [self] in serve(fd) }) {
                registry.withLock { _ = $0.open.remove(fd) }
                LoopbackSocket.closeDescriptor(fd)
            }
        }
        LoopbackSocket.closeDescriptor(listener)
        LoopbackSocket.closeDescriptor(wake.read)
        LoopbackSocket.closeDescriptor(wake.write)
        acceptLoopFinished.signal()
    }

    private func serve(_ fd: Int32) {
        defer {
            registry.withLock { _ = $0.open.remove(fd) }
            LoopbackSocket.closeDescriptor(fd)
        }
        LoopbackSocket.setReceiveTimeout(fd, milliseconds: HTTPServer.idleTimeoutMilliseconds)
        LoopbackSocket.setSendTimeout(fd, milliseconds: 10_000)
        var reader = RequestReader(fd: fd)
        while true {
            switch reader.next() {
            case .end:
                return
            case .rejected(let rejection):
                let response = HTTPResponse.error(rejection.status, rejection.code, rejection.reason)
                _ = LoopbackSocket.sendAll(fd, response.serialized(keepAlive: false))
                lingeringClose(fd)
                return
            case .request(let request):
                switch handler(request) {
                case .drop:
                    return
                case .respond(let response):
                    let keepAlive = request.wantsKeepAlive && !isStopping
                    guard LoopbackSocket.sendAll(fd, response.serialized(keepAlive: keepAlive)), keepAlive else { return }
                }
            }
        }
    }

    /// After refusing a request, stop writing and read briefly what the client is
    /// still sending, so closing does not reset the connection before it reads the answer.
    private func lingeringClose(_ fd: Int32) {
        LoopbackSocket.shutdownWrite(fd)
        LoopbackSocket.setReceiveTimeout(fd, milliseconds: 200)
        var scratch: [UInt8] = []
        for _ in 0..<64 {
            scratch.removeAll(keepingCapacity: true)
            guard case .data = LoopbackSocket.receive(fd, into: &scratch) else { return }
        }
    }
}

/// Reads requests off one connection, keeping bytes that belong to the next one.
struct RequestReader {
    enum Next {
        case request(HTTPRequest)
        case rejected(HTTPRejection)
        /// EOF, timeout or reset: nothing to answer.
        case end
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    init(fd: Int32) {
        self.fd = fd
    }

    mutating func next() -> Next {
        var scanned = 0
        let headLength: Int
        reading: while true {
            // Clients may send stray CRLFs between requests (RFC 9112 §2.2).
            while buffer.count >= 2, buffer[0] == 0x0D, buffer[1] == 0x0A {
                buffer.removeFirst(2)
                scanned = 0
            }
            switch HTTPHeadScan.scan(buffer, from: scanned, limit: HTTPServer.maxRequestBytes) {
            case .complete(let length):
                headLength = length
                break reading
            case .tooLarge:
                return .rejected(HTTPRejection(status: 413, reason: "request head too large"))
            case .incomplete(let resumeAt):
                scanned = resumeAt
                guard case .data = LoopbackSocket.receive(fd, into: &buffer) else { return .end }
            }
        }

        let bodyStart = headLength + 4
        let head: HTTPRequestHead
        switch HTTPRequestHead.parse(buffer[..<headLength]) {
        case .success(let parsed): head = parsed
        case .failure(let error): return .rejected(HTTPRejection(status: error.status, reason: error.reason))
        }
        let contentLength: Int
        switch head.contentLength(max: HTTPServer.maxRequestBytes - bodyStart) {
        case .success(let length): contentLength = length
        case .failure(let rejection): return .rejected(rejection)
        }

        let total = bodyStart + contentLength
        if buffer.count < total, head.headers.tokens("expect").contains("100-continue") {
            guard LoopbackSocket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return .end }
        }
        while buffer.count < total {
            guard case .data = LoopbackSocket.receive(fd, into: &buffer) else { return .end }
        }
        let body = Array(buffer[bodyStart..<total])
        buffer.removeFirst(total)
        return .request(HTTPRequest(method: head.method, target: head.target, minorVersion: head.minorVersion,
                                    headers: head.headers, body: body))
    }
}
