#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
import Wire

/// The redirect target of a browser login (RFC 8252 §7.3): an HTTP listener on
/// 127.0.0.1 that waits for `GET {path}?…&state={state}`, hands it to the login,
/// answers the browser with a small page, and stops listening.
///
/// Any local process can connect to the port, so none may hold up or end the
/// login: connections are served side by side on one thread with `poll` (a
/// slow one never keeps the browser waiting), each has a few seconds and a few
/// KiB to send its request head, and a callback without the right `state` gets
/// an error page and is otherwise ignored. The waiting login ends at its
/// deadline or when cancelled whatever the connections do: neither waits for the
/// serving thread.
final class LoopbackRedirectListener: @unchecked Sendable {
    /// The callback request; `respond` answers the browser (once) and closes the connection.
    struct Callback: Sendable {
        let query: [String: String]
        let respond: @Sendable (_ ok: Bool, _ message: String) -> Void
    }

    enum Failure: Error {
        case cannotListen(String)
        case timedOut
        case closed
    }

    /// Seconds a connection has to send its whole request head: a socket's own timeout, judged in
    /// real time (`Date()`) on the listener's thread, which blocks in poll(2) — no wait of the core's,
    /// so not on its `Clock` (an exemption listed in `WaitsOnTheClockTests`).
    static let headTimeout: TimeInterval = 5
    /// A request head larger than this is refused: the callback's is well under 1 KiB,
    /// browsers add a few KiB of headers (cookies of other local servers among them).
    static let maxHeadBytes = 16_384
    /// Connections served at once; a newer one closes the oldest, so a local process
    /// cannot fill the listener with idle connections and shut the browser out.
    static let maxConnections = 32

    let port: UInt16
    private let path: String
    private let state: String
    private let listenFD: Int32
    private let wake: (read: Int32, write: Int32)
    private let lock = Lock()
    private var closed = false
    private let outcome = Outcome()

    /// Starts listening on 127.0.0.1:`port` (0: a free port) for `GET path` with this `state`.
    init(port: UInt16, path: String, state: String) throws(Failure) {
        do throws(SocketError) {
            let bound = try LoopbackSocket.makeListener(port: port, backlog: 16)
            listenFD = bound.fd
            self.port = bound.port
        } catch {
            throw .cannotListen(error.operation == "socket" ? "socket failed" : "127.0.0.1:\(port) is not available")
        }
        do {
            wake = try LoopbackSocket.makeWakePipe()
        } catch {
            LoopbackSocket.closeDescriptor(listenFD)
            throw .cannotListen("pipe failed")
        }
        self.path = path
        self.state = state
        guard DetachedThread.start({ [self] in serve() }) else {
            for fd in [listenFD, wake.read, wake.write] { LoopbackSocket.closeDescriptor(fd) }
            throw .cannotListen("cannot start a thread")
        }
    }

    /// Stops listening; a pending `callback` ends with `.closed`. The serving
    /// thread closes every descriptor itself, so none is closed under it.
    func shutDown() {
        lock.lock()
        defer { lock.unlock() }
        guard !closed else { return }
        closed = true
        LoopbackSocket.writeByte(wake.write)
        _ = outcome.resolve(.failure(.closed))
    }

    private var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Still listening: the login waits for its redirect.
    var isWaiting: Bool { !isClosed }

    /// The query of a pasted URL (nil without one), before it is matched to a listener.
    static func pastedQuery(_ url: String) -> [String: String]? {
        guard let mark = url.firstIndex(of: "?") else { return nil }
        let query = url[mark...].prefix { $0 != " " && $0 != "\r" && $0 != "#" }
        return parseRequest(Array("GET /\(query) HTTP/1.1".utf8))?.1
    }

    /// The callback with the right state; `.timedOut` at `deadline` on `clock`, `.closed` when
    /// the task is cancelled or the listener shut down, whichever comes first.
    func callback(until deadline: Deadline, on clock: Clock) async throws(Failure) -> Callback {
        let timer = Task { [weak self, outcome] in
            guard (try? await clock.sleep(until: deadline)) != nil else { return }  // cancelled: the login ended first
            if outcome.resolve(.failure(.timedOut)) { self?.shutDown() }
        }
        defer { timer.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { outcome.wait($0) }
        } onCancel: {
            shutDown()
        }
        return try result.get()
    }

    /// A redirect URL the person pasted back (the browser could not reach this listener):
    /// `http://127.0.0.1:{port}{path}?…` (or `localhost`), with this login's `state`. Taken like
    /// the browser's own callback, whichever comes first; a wrong one changes nothing.
    func paste(_ url: String) -> PasteOutcome {
        let text = String(url.drop { $0 == " " }.reversed().drop { $0 == " " || $0 == "\r" }.reversed())
        let target = ["http://127.0.0.1:\(port)", "http://localhost:\(port)"].first { text.hasPrefix($0 + path) }
            .map { String(text.dropFirst($0.count)) }
        guard let target, let (requestPath, query) = Self.parseRequest(Array("GET \(target) HTTP/1.1".utf8)), requestPath == path else {
            return .notARedirect
        }
        guard query["state"] == state else { return .wrongState }
        // Nobody waits for a page: the person is at the terminal or the host that pasted it.
        guard outcome.resolve(.success(Callback(query: query) { _, _ in })) else { return .notWaiting }
        shutDown()
        return .accepted
    }

    enum PasteOutcome: Equatable {
        case accepted
        /// Not this listener's callback address (another port, path, or not a URL at all).
        case notARedirect
        case wrongState
        /// The login already ended, or its callback came first.
        case notWaiting
    }

    // MARK: Serving

    /// One connection whose request head is still arriving.
    private struct Connection {
        let fd: Int32
        let deadline: Date
        var head: [UInt8] = []
    }

    private func serve() {
        var connections: [Connection] = []
        while !isClosed {
            let readable = LoopbackSocket.waitReadable([listenFD, wake.read] + connections.map(\.fd), timeoutMilliseconds: 250)
            var waiting: [Connection] = []
            for (index, var connection) in connections.enumerated() {
                if readable[index + 2] {
                    switch Self.read(&connection) {
                    case .incomplete: break
                    case .gone:
                        LoopbackSocket.closeDescriptor(connection.fd)
                        continue
                    case .complete:
                        handle(connection)
                        continue
                    }
                }
                if Date() >= connection.deadline {
                    LoopbackSocket.closeDescriptor(connection.fd)  // too slow: no answer is owed
                } else {
                    waiting.append(connection)
                }
            }
            connections = waiting
            if readable[0], !isClosed, let fd = LoopbackSocket.acceptConnection(listenFD) {
                // Bounds every recv and send on the connection, should poll ever report it ready in vain.
                LoopbackSocket.setReceiveTimeout(fd, milliseconds: 100)
                LoopbackSocket.setSendTimeout(fd, milliseconds: 1_000)
                if connections.count >= Self.maxConnections { LoopbackSocket.closeDescriptor(connections.removeFirst().fd) }
                connections.append(Connection(fd: fd, deadline: Date().addingTimeInterval(Self.headTimeout)))
            }
        }
        for connection in connections { LoopbackSocket.closeDescriptor(connection.fd) }
        for fd in [listenFD, wake.read, wake.write] { LoopbackSocket.closeDescriptor(fd) }
    }

    private enum ReadProgress {
        case incomplete
        case complete
        case gone
    }

    private static func read(_ connection: inout Connection) -> ReadProgress {
        let room = maxHeadBytes - connection.head.count
        guard room > 0, case .data = LoopbackSocket.receive(connection.fd, into: &connection.head, capacity: min(room, 4096)) else {
            return .gone
        }
        return headEnd(connection.head) != nil ? .complete : .incomplete
    }

    /// The index just past the blank line that ends an HTTP request head.
    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard case .complete(let length) = HTTPHeadScan.scan(bytes, limit: maxHeadBytes) else { return nil }
        return length + 4
    }

    /// Answers a complete request head; the right callback goes to the waiting login.
    private func handle(_ connection: Connection) {
        let fd = connection.fd
        guard let (requestPath, query) = Self.parseRequest(connection.head) else {
            return Self.send(fd, status: "400 Bad Request", body: Self.page(ok: false, "That was not a login callback."))
        }
        guard requestPath == path else {
            return Self.send(fd, status: "404 Not Found", body: Self.page(ok: false, "Nothing here."))
        }
        // The state ties this redirect to this login: anything else is a forgery or a stale tab.
        guard query["state"] == state else {
            return Self.send(fd, status: "400 Bad Request",
                             body: Self.page(ok: false, "This login link is not the one the application is waiting for."))
        }
        let reply = Reply(fd)
        let callback = Callback(query: query) { ok, message in
            // 200 either way: the page itself tells the user how the login ended.
            reply.send(status: "200 OK", body: Self.page(ok: ok, message))
        }
        if outcome.resolve(.success(callback)) {
            shutDown()
        } else {
            reply.send(status: "200 OK", body: Self.page(ok: false, "The application is no longer waiting for this login. Please start again."))
        }
    }

    /// The path and query of a `GET` request head (with or without its blank line and what follows);
    /// `nil` for anything else, a head Wire's parser refuses among it.
    static func parseRequest(_ head: [UInt8]) -> (String, [String: String])? {
        let length = headEnd(head).map { $0 - 4 } ?? head.count
        guard case .success(let request) = HTTPRequestHead.parse(head[..<length]), request.method == "GET" else { return nil }
        let target = request.target
        let pathEnd = target.firstIndex(of: "?") ?? target.endIndex
        var query: [String: String] = [:]
        if pathEnd < target.endIndex {
            for pair in target[target.index(after: pathEnd)...].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let key = FormEncoding.decodeComponent(String(kv[0])) else { continue }
                query[key] = kv.count > 1 ? FormEncoding.decodeComponent(String(kv[1])) : ""
            }
        }
        return (String(target[..<pathEnd]), query)
    }

    static func send(_ fd: Int32, status: String, body: String) {
        let bytes = Array("HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n\(body)".utf8)
        _ = LoopbackSocket.sendAll(fd, bytes)
        LoopbackSocket.closeDescriptor(fd)
    }

    /// What the browser shows when it comes back: how the login ended, in the look of the
    /// issuer's pages (`PageStyle`, inline); a failure is an alert, so screen readers say it.
    static func page(ok: Bool, _ message: String) -> String {
        let escaped = HTMLText.escape(message)
        let title = ok ? "Login finished" : "Login not finished"
        let mark = "<p class=\"status \(ok ? "ok" : "failed")\" aria-hidden=\"true\">\(ok ? "✓" : "✗")</p>"
        let text = ok ? "<p>\(escaped)</p>" : "<p class=\"error\" role=\"alert\">\(escaped)</p>"
        return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>\(title)</title>\n\(PageStyle.head)</head>\n"
            + "<body><main>\(mark)<h1>\(title)</h1>\(text)</main></body></html>\n"
    }

    /// The browser's connection for the callback: answered exactly once, and
    /// closed even if the login never answers it.
    private final class Reply: Sendable {
        private let fd: Locked<Int32?>

        init(_ fd: Int32) { self.fd = Locked(fd) }

        func send(status: String, body: String) {
            guard let fd = take() else { return }
            LoopbackRedirectListener.send(fd, status: status, body: body)
        }

        private func take() -> Int32? {
            fd.withLock { fd in
                defer { fd = nil }
                return fd
            }
        }

        deinit {
            if let fd = take() { LoopbackSocket.closeDescriptor(fd) }
        }
    }

    /// Where the login's result meets its waiter, whichever comes first: the
    /// first `resolve` wins, and `wait` resumes at once if it came earlier.
    private final class Outcome: @unchecked Sendable {
        private let lock = Lock()
        private var result: Result<Callback, Failure>?
        private var waiter: CheckedContinuation<Result<Callback, Failure>, Never>?

        /// True when this result is the one the login gets.
        func resolve(_ value: Result<Callback, Failure>) -> Bool {
            lock.lock()
            guard result == nil else {
                lock.unlock()
                return false
            }
            result = value
            let continuation = waiter
            waiter = nil
            lock.unlock()
            continuation?.resume(returning: value)
            return true
        }

        func wait(_ continuation: CheckedContinuation<Result<Callback, Failure>, Never>) {
            lock.lock()
            guard let result else {
                waiter = continuation
                lock.unlock()
                return
            }
            lock.unlock()
            continuation.resume(returning: result)
        }
    }
}
