import Wire

/// The dev issuer's one HTTP client: a bounded `GET` of a plain-http loopback URL (it speaks no TLS), for the
/// documents it must fetch — a client's metadata document, a trusted issuer's `/jwks`.
enum LoopbackGet {
    static func isLoopback(_ url: String) -> Bool { target(url) != nil }

    /// One `GET` on a fresh connection, `Connection: close`, 5 s bounded, the answer at most `maxBytes` past its head.
    static func get(_ url: String, maxBytes: Int) -> (status: Int, body: [UInt8])? {
        guard let (port, path) = target(url), let fd = try? LoopbackSocket.connectLoopback(port: port, timeoutMilliseconds: 5000) else { return nil }
        defer { LoopbackSocket.closeDescriptor(fd) }
        let head = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
        guard LoopbackSocket.sendAll(fd, Array(head.utf8)) else { return nil }
        var answer: [UInt8] = []
        while answer.count <= maxBytes + 16 * 1024 {
            guard case .data = LoopbackSocket.receive(fd, into: &answer) else { break }
        }
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = answer.indices.first(where: { answer[$0...].starts(with: separator) }) else { return nil }
        let statusLine = String(decoding: answer[..<end], as: UTF8.self).split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return (status, Array(answer[(end + separator.count)...]))
    }

    /// `http://127.0.0.1:PORT/path`'s port and path; nil for anything else.
    private static func target(_ url: String) -> (UInt16, String)? {
        guard url.hasPrefix("http://127.0.0.1:") else { return nil }
        let rest = url.dropFirst("http://127.0.0.1:".count)
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard let port = UInt16(digits), port > 0 else { return nil }
        let path = rest.dropFirst(digits.count)
        guard path.hasPrefix("/"), !path.contains("#") else { return nil }
        return (port, String(path))
    }
}
