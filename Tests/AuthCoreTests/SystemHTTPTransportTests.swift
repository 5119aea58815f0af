import XCTest
import AuthCore
import Wire
import TestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class SystemHTTPTransportTests: XCTestCase {
    private var server: LoopbackServer!

    override func setUpWithError() throws { server = try LoopbackServer() }

    override func tearDown() { server.stop() }

    private func url(_ path: String) -> String { "http://127.0.0.1:\(server.port)\(path)" }

    func testBodyRoundTripAndLowercasedHeaders() async throws {
        let transport = SystemHTTPTransport()
        let body: [UInt8] = Array(0...255) + Array("grant_type=password&x=%26".utf8)
        let response = try await transport.send(HTTPRequest(
            method: "POST", url: url("/echo?q=1"),
            headers: [("Content-Type", "application/x-www-form-urlencoded"), ("X-Test", "one")], body: body, timeout: 5))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.body, body)
        XCTAssertEqual(response.headers["x-method"], "POST")
        XCTAssertEqual(response.headers["x-test-echo"], "one")
        XCTAssertEqual(response.headers["content-type"], "application/octet-stream")
        XCTAssertNil(response.headers["Content-Type"])
    }

    func testRedirectIsReturnedNotFollowed() async throws {
        let transport = SystemHTTPTransport()
        let response = try await transport.send(HTTPRequest(
            method: "POST", url: url("/redirect"), headers: [("Authorization", "Bearer SECRET")], body: [1, 2], timeout: 5))
        XCTAssertEqual(response.status, 302)
        XCTAssertEqual(response.headers["location"], url("/echo"))
        XCTAssertEqual(response.body, Array("moved".utf8))
        XCTAssertEqual(server.paths, ["/redirect"], "the redirect target was never requested")
    }

    func testCookiesAreNeitherStoredNorSent() async throws {
        let transport = SystemHTTPTransport()
        let first = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 5))
        XCTAssertEqual(first.headers["set-cookie"], "sid=abc; Path=/")
        let second = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 5))
        XCTAssertNil(second.headers["x-cookie-echo"])
        XCTAssertEqual(server.paths, ["/echo", "/echo"])
    }

    func testTimeout() async throws {
        let transport = SystemHTTPTransport()
        let start = Date()
        do {
            _ = try await transport.send(HTTPRequest(url: url("/hang"), timeout: 0.5))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .timedOut)
        }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(elapsed, 0.4)
        XCTAssertLessThan(elapsed, 3)
    }

    /// 24 transfers parked on a server that never answers hold up neither an auth-server call nor a
    /// short-timeout request to a fast server. Before, libcurl ran as blocking jobs on Dispatch's
    /// shared pool: the 24 took 25 s to all start (Dispatch adds threads slowly), and everything else
    /// queued behind them, even `Task.sleep`'s timers.
    func testParkedTransfersHoldUpNothingElse() async throws {
        let transport = SystemHTTPTransport()
        let hang = HTTPRequest(url: url("/hang"), timeout: 30)
        var start = Date()
        let parked = (0..<24).map { _ in Task { try await transport.send(hang) } }
        defer { parked.forEach { $0.cancel() } }
        while server.paths.filter({ $0 == "/hang" }).count < 24, Date().timeIntervalSince(start) < 10 {
            try await Task.sleep(nanoseconds: 20_000_000)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 3, "each transfer starts at once")
        start = Date()
        let token = try await transport.send(HTTPRequest(method: "POST", url: url("/echo"), body: [1], timeout: 5))
        XCTAssertEqual(token.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1, "an auth-server call beside 24 parked transfers")
        start = Date()
        let quick = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 1))
        XCTAssertEqual(quick.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        for task in parked {
            task.cancel()
            _ = await task.result
        }
    }

    #if os(Linux)
    /// `fetch`es beyond the transport's limit wait for a place, their deadline counting from when the
    /// transport accepted them; auth-server calls never wait for one; a waiting request can be cancelled.
    func testResourceLaneBoundsFetchesButNotAuthServerCalls() async throws {
        let transport = CurlTransport(maxConcurrentResourceTransfers: 2)
        let hang = HTTPRequest(url: url("/hang"), timeout: 30, lane: .resource)
        let parked = (0..<2).map { _ in Task { try await transport.send(hang) } }
        defer { parked.forEach { $0.cancel() } }
        let parking = Date()
        while server.paths.count < 2, Date().timeIntervalSince(parking) < 10 { try await Task.sleep(nanoseconds: 20_000_000) }
        XCTAssertEqual(server.paths, ["/hang", "/hang"])

        var start = Date()
        do {
            _ = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 0.5, lane: .resource))
            XCTFail("no place within the timeout")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .timedOut)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        start = Date()
        let token = try await transport.send(HTTPRequest(method: "POST", url: url("/echo"), body: [1], timeout: 5))
        XCTAssertEqual(token.status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)

        let echo = HTTPRequest(url: url("/echo"), timeout: 10, lane: .resource)
        let waiting = Task { try await transport.send(echo) }
        let cancelled = Task { try await transport.send(echo) }
        try await Task.sleep(nanoseconds: 100_000_000)
        cancelled.cancel()
        let outcome = await cancelled.result
        XCTAssertThrowsError(try outcome.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
        parked[0].cancel()
        let admitted = try await waiting.value
        XCTAssertEqual(admitted.status, 200, "the freed place goes to the waiting request")
        XCTAssertEqual(server.paths.filter { $0 == "/echo" }.count, 2, "the timed-out and the cancelled one were never sent")
        parked[1].cancel()
        for task in parked { _ = await task.result }
    }

    /// With proxy variables set, a loopback destination is reached directly, and an http request
    /// carrying a credential goes direct too; only one without reaches the proxy.
    /// (0.0.0.0 reaches this machine without being a loopback name, so the direct path is observable.)
    func testProxyNeverSeesLoopbackOrCleartextCredentials() async throws {
        let proxy = try LoopbackServer()
        defer { proxy.stop() }
        let names = ["http_proxy", "HTTPS_PROXY", "ALL_PROXY", "no_proxy", "NO_PROXY"]
        let saved = names.map { getenv($0).map { String(cString: $0) } }
        defer { for (name, value) in zip(names, saved) { if let value { setenv(name, value, 1) } else { unsetenv(name) } } }
        for name in names.prefix(3) { setenv(name, "http://127.0.0.1:\(proxy.port)", 1) }
        for name in names.suffix(2) { unsetenv(name) }
        let transport = SystemHTTPTransport()
        let direct = try await transport.send(HTTPRequest(url: url("/echo"), headers: [("Authorization", "Bearer SECRET")], timeout: 5,
                                                          lane: .resource))
        XCTAssertEqual(direct.status, 200)
        _ = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 5, lane: .resource))
        XCTAssertEqual(proxy.paths, [], "loopback is never proxied")

        let other = "http://0.0.0.0:\(server.port)/echo"
        let form = Array("grant_type=password&username=a&password=SECRET".utf8)
        for request in [HTTPRequest(url: other, headers: [("Authorization", "Bearer SECRET")], timeout: 5, lane: .resource),
                        HTTPRequest(method: "POST", url: other, body: form, timeout: 5, lane: .resource),
                        HTTPRequest(method: "POST", url: other, body: form, timeout: 5)] {
            let response = try await transport.send(request)
            XCTAssertEqual(response.status, 200, "\(request) went direct")
        }
        XCTAssertEqual(proxy.paths, [], "no credential reached the proxy")
        _ = try await transport.send(HTTPRequest(url: other, timeout: 5, lane: .resource))
        XCTAssertEqual(proxy.paths, [other], "a request without credentials does use the proxy")
        XCTAssertEqual(server.paths.count, 5)
    }

    /// A sub-millisecond timeout is not curl's 0 ("no timeout"): rounded up, it expires.
    func testSubMillisecondTimeoutExpires() async throws {
        let transport = SystemHTTPTransport()
        let start = Date()
        do {
            _ = try await transport.send(HTTPRequest(url: url("/hang"), timeout: 0.0004))
            XCTFail("expected a timeout")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .timedOut)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
    }
    #endif

    /// A TLS failure says so (it was "could not be reached"): here, a server that answers a TLS
    /// handshake with plain text.
    func testTLSFailureIsNamedAsSuch() async throws {
        let (listener, port) = try LoopbackSocket.makeListener(port: 0)
        defer { LoopbackSocket.closeDescriptor(listener) }
        Thread {
            guard let fd = LoopbackSocket.acceptConnection(listener) else { return }
            _ = LoopbackSocket.sendAll(fd, Array("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n".utf8))
            LoopbackSocket.closeDescriptor(fd)
        }.start()
        let transport = SystemHTTPTransport()
        do {
            _ = try await transport.send(HTTPRequest(url: "https://127.0.0.1:\(port)/echo", timeout: 5))
            XCTFail("expected a TLS failure")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .tlsFailed("127.0.0.1"))
            XCTAssertTrue("\(error)".contains("TLS"), "\(error)")
        }
    }

    /// Headers over the header limit are reported as such, not as a body over the body's limit;
    /// a lone CR inside a header value does not start a header line of its own.
    func testResponseHeaderLimitAndLoneCR() async throws {
        let transport = SystemHTTPTransport()
        do {
            _ = try await transport.send(HTTPRequest(url: url("/huge-headers"), timeout: 5))
            XCTFail("expected headersTooLarge")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .headersTooLarge(limit: 65536))
        }
        let response = try await transport.send(HTTPRequest(url: url("/lone-cr"), timeout: 5))
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.headers["x-injected"])
        XCTAssertEqual(response.headers["x-a"], "a X-Injected: 1")
    }

    func testResponseSizeCap() async throws {
        let transport = SystemHTTPTransport(maxResponseBytes: 1000)
        for path in ["/big", "/big-unframed"] {
            do {
                _ = try await transport.send(HTTPRequest(url: url(path), timeout: 5))
                XCTFail("expected responseTooLarge for \(path)")
            } catch {
                XCTAssertEqual(error as? HTTPTransportError, .responseTooLarge, path)
            }
        }
        let ok = try await transport.send(HTTPRequest(method: "POST", url: url("/echo"), body: Array(repeating: 7, count: 1000),
                                                      timeout: 5))
        XCTAssertEqual(ok.body.count, 1000, "exactly the limit is allowed")
    }

    func testUnreachableNamesTheHostOnly() async throws {
        let port = try LoopbackServer.unusedPort()
        let transport = SystemHTTPTransport()
        do {
            _ = try await transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/x?token=SECRET",
                                                     headers: [("Authorization", "Bearer SECRET")], timeout: 5))
            XCTFail("expected unreachable")
        } catch let error as HTTPTransportError {
            guard case .unreachable(let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("127.0.0.1"), reason)
            XCTAssertFalse(String(describing: error).contains("SECRET"))
        }
    }

    func testInvalidURLs() async {
        let transport = SystemHTTPTransport()
        for bad in ["ftp://127.0.0.1/", "not a url", "http://127.0.0.1\\@evil.com/", "", "http://[::1/"] {
            do {
                _ = try await transport.send(HTTPRequest(url: bad, timeout: 1))
                XCTFail("\(bad) should be rejected")
            } catch {
                XCTAssertEqual(error as? HTTPTransportError, .invalidURL, bad)
            }
        }
        for headers in [[("Authorization", "Bearer a\r\nX-Evil: 1")], [("X\nY", "v")], [("X", "a\u{0}")]] {
            do {
                _ = try await transport.send(HTTPRequest(url: url("/echo"), headers: headers, timeout: 1))
                XCTFail("header splitting must be refused")
            } catch {
                XCTAssertEqual(error as? HTTPTransportError, .invalidURL)
            }
        }
        do {
            _ = try await transport.send(HTTPRequest(url: url("/echo"), timeout: 0))
            XCTFail("a zero timeout has already expired")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .timedOut)
        }
        XCTAssertEqual(server.paths, [])
    }

    func testCancellation() async throws {
        let transport = SystemHTTPTransport()
        let request = HTTPRequest(url: url("/hang"), timeout: 5)
        let task = Task { try await transport.send(request) }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        let start = Date()
        let result = await task.result
        XCTAssertLessThan(Date().timeIntervalSince(start), 2)
        XCTAssertThrowsError(try result.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
    }

    func testRequestDescriptionHidesSecrets() {
        let request = HTTPRequest(method: "POST", url: "https://a.com/token?code=SECRET#frag",
                                  headers: [("Authorization", "Basic SECRET")], body: Array("password=SECRET".utf8))
        var dumped = ""
        dump(request, to: &dumped)
        for text in [String(describing: request), String(reflecting: request), dumped] {
            XCTAssertFalse(text.contains("SECRET"), text)
        }
        XCTAssertEqual(request.description, "POST https://a.com/token")
        XCTAssertEqual(request.header("authorization"), "Basic SECRET")
        XCTAssertEqual(String(describing: HTTPResponse(status: 200, body: Array("SECRET".utf8))), "HTTP 200 (6 bytes)")
    }
}

/// A minimal HTTP/1.1 server on 127.0.0.1 with a few canned routes, one thread
/// per connection, for exercising the real transport without the network.
final class LoopbackServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let seen = TestBox<[String]>([])

    var paths: [String] { seen.get() }

    init() throws {
        let (fd, port) = try LoopbackServer.openListener()
        listener = fd
        self.port = port
        let listener = fd
        Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                if client < 0 {
                    if errno == EINTR { continue }
                    // Closed here, once nothing waits on it: closed by stop() while this thread was
                    // between two accepts, the number could go to the next test's listener, and this
                    // stale server would answer (and count) that test's requests.
                    close(listener)
                    return
                }
                Thread { [self] in self.serve(client) }.start()
            }
        }.start()
    }

    /// Ends the accept loop (a shut-down listening socket fails every accept); the loop closes it.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// A port on which nothing listens (bound, then closed).
    static func unusedPort() throws -> Int {
        let (fd, port) = try openListener()
        close(fd)
        return port
    }

    private static func openListener() throws -> (Int32, Int) {
        let bound = try LoopbackSocket.makeListener(port: 0, backlog: 16)
        return (bound.fd, Int(bound.port))
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        var buffer: [UInt8] = []
        guard let headerEnd = readUntilHeaderEnd(fd, &buffer) else { return }
        let head = String(decoding: buffer[..<headerEnd], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return }
        let method = String(requestLine[0])
        let target = String(requestLine[1])
        let path = String(target.prefix { $0 != "?" })
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(buffer[(headerEnd + 4)...])
        let expected = Int(headers["content-length"] ?? "0") ?? 0
        while body.count < expected, let chunk = readChunk(fd) { body += chunk }
        seen.update { $0.append(path) }

        switch path {
        case "/echo":
            var extra = "X-Method: \(method)\r\nSet-Cookie: sid=abc; Path=/\r\n"
            if let test = headers["x-test"] { extra += "X-Test-Echo: \(test)\r\n" }
            if let cookie = headers["cookie"] { extra += "X-Cookie-Echo: \(cookie)\r\n" }
            reply(fd, status: "200 OK", headers: extra + "Content-Type: application/octet-stream\r\n", body: body)
        case "/redirect":
            reply(fd, status: "302 Found", headers: "Location: http://127.0.0.1:\(port)/echo\r\n", body: Array("moved".utf8))
        case "/big":
            reply(fd, status: "200 OK", headers: "", body: Array(repeating: 0x61, count: 5000))
        case "/big-unframed":
            _ = write(fd, Array("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".utf8))
            for _ in 0..<10 { _ = write(fd, Array(repeating: 0x62, count: 500)) }
        case "/huge-headers":
            reply(fd, status: "200 OK", headers: (0..<100).map { "X-Pad-\($0): \(String(repeating: "p", count: 1000))\r\n" }.joined(), body: [])
        case "/lone-cr":
            reply(fd, status: "200 OK", headers: "X-A: a\rX-Injected: 1\r\n", body: [])
        case "/hang":
            while readChunk(fd) != nil {}
        default:
            reply(fd, status: "404 Not Found", headers: "", body: [])
        }
    }

    private func reply(_ fd: Int32, status: String, headers: String, body: [UInt8]) {
        let head = "HTTP/1.1 \(status)\r\n\(headers)Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        _ = write(fd, Array(head.utf8) + body)
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        LoopbackSocket.sendAll(fd, bytes)
    }

    private func readChunk(_ fd: Int32) -> [UInt8]? {
        var chunk: [UInt8] = []
        guard case .data = LoopbackSocket.receive(fd, into: &chunk, capacity: 4096) else { return nil }
        return chunk
    }

    private func readUntilHeaderEnd(_ fd: Int32, _ buffer: inout [UInt8]) -> Int? {
        let marker: [UInt8] = [13, 10, 13, 10]
        while true {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where Array(buffer[i..<(i + 4)]) == marker { return i }
            }
            guard let chunk = readChunk(fd) else { return nil }
            buffer += chunk
        }
    }
}
