#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSON

/// A response as the test client read it off the wire.
struct TestResponse {
    let status: Int
    let headers: [(name: String, value: String)]
    let body: [UInt8]

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var json: JSONValue? { try? JSONParser.parse(body) }
}

enum TestClientError: Error, Equatable {
    case connect(Int32)
    case closed
    case timedOut
    case malformed(String)
}

/// A blocking HTTP/1.1 client on one loopback connection, deliberately
/// independent of the server's code. Every read has a receive timeout, so a
/// server bug fails the test instead of hanging it.
final class TestConnection {
    private var fd: Int32
    private var buffer: [UInt8] = []

    init(port: UInt16, timeoutMilliseconds: Int = 2000) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        guard fd >= 0 else { throw TestClientError.connect(errno) }
        var tv = timeval()
        tv.tv_sec = timeoutMilliseconds / 1000
        tv.tv_usec = suseconds_t((timeoutMilliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard rc == 0 else {
            let code = errno
            _ = posixClose(fd)
            throw TestClientError.connect(code)
        }
    }

    deinit {
        close()
    }

    func close() {
        if fd >= 0 {
            _ = posixClose(fd)
            fd = -1
        }
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            #if canImport(Glibc)
            let flags = Int32(MSG_NOSIGNAL)
            #else
            let flags: Int32 = 0
            #endif
            let n = bytes.withUnsafeBytes { posixSend(fd, $0.baseAddress! + offset, bytes.count - offset, flags) }
            guard n > 0 else { throw TestClientError.closed }
            offset += n
        }
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    /// Sends one request and reads its response.
    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestResponse {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
        return try readResponse()
    }

    /// Reads one response (skipping interim 1xx responses).
    func readResponse() throws -> TestResponse {
        while true {
            let headEnd = try readHead()
            let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
            buffer.removeFirst(headEnd + 4)
            var lines = headText.components(separatedBy: "\r\n")
            let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
            guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]) else {
                throw TestClientError.malformed(headText)
            }
            var headers: [(name: String, value: String)] = []
            for line in lines {
                guard let colon = line.firstIndex(of: ":") else { throw TestClientError.malformed(line) }
                headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            }
            if status < 200 { continue }
            let length = headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) } ?? 0
            while buffer.count < length { try fill() }
            let body = Array(buffer[..<length])
            buffer.removeFirst(length)
            return TestResponse(status: status, headers: headers, body: body)
        }
    }

    /// True when the server closes the connection (EOF or reset) with nothing sent first.
    func closesWithoutResponse() -> Bool {
        do {
            try fill()
            return false
        } catch {
            return error as? TestClientError == .closed && buffer.isEmpty
        }
    }

    private func readHead() throws -> Int {
        while true {
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4)
                where buffer[i] == 0x0D && buffer[i + 1] == 0x0A && buffer[i + 2] == 0x0D && buffer[i + 3] == 0x0A {
                    return i
                }
            }
            try fill()
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[..<n])
            return
        }
        if n < 0, errno == EAGAIN || errno == EWOULDBLOCK { throw TestClientError.timedOut }
        throw TestClientError.closed
    }
}

private func posixClose(_ fd: Int32) -> Int32 {
    close(fd)
}

private func posixSend(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int, _ flags: Int32) -> Int {
    send(fd, pointer, count, flags)
}
