import Foundation
import JSONRPC
import Wire

/// The redirect target of a browser login (RFC 8252 §7.3): a one-shot HTTP
/// listener on 127.0.0.1 that waits for `GET /callback?…`, lets the login
/// finish, answers the browser with a small page, and stops listening.
final class LoopbackRedirectListener: @unchecked Sendable {
    /// The callback request; `respond` answers the browser and closes the listener.
    struct Callback: Sendable {
        let query: [String: String]
        let respond: @Sendable (_ ok: Bool, _ message: String) -> Void
    }

    enum Failure: Error {
        case cannotListen(String)
        case timedOut
        case closed
    }

    let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var closed = false

    init(port: UInt16) throws(Failure) {
        do throws(SocketError) {
            let bound = try LoopbackSocket.makeListener(port: port, backlog: 8)
            fd = bound.fd
            self.port = bound.port
        } catch {
            throw .cannotListen(error.operation == "socket" ? "socket failed" : "127.0.0.1:\(port) is not available")
        }
    }

    deinit { shutDown() }

    /// Stops listening; a pending `waitForCallback` ends with `.closed`.
    func shutDown() {
        lock.lock()
        let wasOpen = !closed
        closed = true
        lock.unlock()
        if wasOpen { LoopbackSocket.closeDescriptor(fd) }
    }

    private var isClosed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return closed
    }

    /// Waits (on a thread of its own, polling so it notices `shutDown`) for a
    /// request to `path`; other paths get a 404 and the wait goes on.
    func waitForCallback(path: String, deadline: Date) async throws(Failure) -> Callback {
        let result: Result<Callback, Failure> = await withCheckedContinuation { continuation in
            Thread.detachNewThread { [self] in
                continuation.resume(returning: self.acceptLoop(path: path, deadline: deadline))
            }
        }
        return try result.get()
    }

    private func acceptLoop(path: String, deadline: Date) -> Result<Callback, Failure> {
        while true {
            if isClosed { return .failure(.closed) }
            if Date() >= deadline { return .failure(.timedOut) }
            guard LoopbackSocket.waitReadable([fd], timeoutMilliseconds: 200)[0],
                  let client = LoopbackSocket.acceptConnection(fd) else { continue }
            guard let (requestPath, query) = Self.readRequest(client) else {
                Self.send(client, status: "400 Bad Request", body: Self.page(ok: false, "That was not a login callback."))
                continue
            }
            guard requestPath == path else {
                Self.send(client, status: "404 Not Found", body: Self.page(ok: false, "Nothing here."))
                continue
            }
            let answered = Locked(false)
            return .success(Callback(query: query) { [self] ok, message in
                let first = answered.withLock { done -> Bool in
                    defer { done = true }
                    return !done
                }
                guard first else { return }
                // 200 either way: the page itself tells the user how the login ended.
                Self.send(client, status: "200 OK", body: Self.page(ok: ok, message))
                shutDown()
            })
        }
    }

    /// Reads the request head (bounded in size and time) and returns its path and query.
    static func readRequest(_ client: Int32) -> (String, [String: String])? {
        LoopbackSocket.setReceiveTimeout(client, milliseconds: 5_000)
        var head: [UInt8] = []
        while head.count < 16_384, case .data = LoopbackSocket.receive(client, into: &head, capacity: 4096) {
            if head.count >= 4, head.suffix(4) == [13, 10, 13, 10] { break }
        }
        guard let lineEnd = head.firstIndex(of: 13) else { return nil }
        let parts = String(decoding: head[..<lineEnd], as: UTF8.self).split(separator: " ")
        guard parts.count == 3, parts[0] == "GET" else { return nil }
        let target = parts[1]
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

    static func send(_ client: Int32, status: String, body: String) {
        let bytes = Array("HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n\(body)".utf8)
        _ = LoopbackSocket.sendAll(client, bytes)
        LoopbackSocket.closeDescriptor(client)
    }

    static func page(ok: Bool, _ message: String) -> String {
        let escaped = HTMLText.escape(message)
        let title = ok ? "Login finished" : "Login not finished"
        return "<!doctype html><meta charset=utf-8><title>\(title)</title><body style=\"font-family:sans-serif;margin:3em\"><h1>\(title)</h1><p>\(escaped)</p></body>"
    }
}
