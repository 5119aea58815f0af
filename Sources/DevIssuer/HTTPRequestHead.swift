#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wire

/// Why a request was refused before it reached a route; the server answers
/// with `status` and closes the connection, since framing can no longer be trusted.
struct HTTPRejection: Error, Sendable, Equatable {
    var status: Int
    var reason: String

    /// The `error` member of the JSON body.
    var code: String {
        switch status {
        case 400: return "bad_request"
        case 413: return "request_too_large"
        default: return "unsupported"
        }
    }
}

/// The request line and header fields of an HTTP/1.x request, parsed strictly.
///
/// Strict because this server sits behind test suites that probe clients'
/// error handling: anything ambiguous (obsolete line folding, conflicting
/// `Content-Length`, transfer codings) is refused rather than guessed at.
struct HTTPRequestHead: Sendable {
    var method: String
    var target: String
    var minorVersion: Int
    var headers: HTTPHeaders
    /// The declared body length; 0 when there is no `Content-Length`.
    var contentLength: Int

    /// Parses the bytes before the blank line (without the final CRLF CRLF).
    static func parse(_ bytes: ArraySlice<UInt8>, maxBodyLength: Int) -> Result<HTTPRequestHead, HTTPRejection> {
        guard let text = String(bytes: bytes, encoding: .utf8) else { return .failure(bad("request head is not UTF-8")) }
        var lines = text.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return .failure(bad("empty request")) }
        let requestLine = lines.removeFirst()

        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(bad("malformed request line")) }
        let method = String(parts[0])
        let target = String(parts[1])
        let version = String(parts[2])
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else { return .failure(bad("malformed method")) }
        guard target.hasPrefix("/") || target == "*", target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(bad("malformed request target"))
        }
        let minorVersion: Int
        switch version {
        case "HTTP/1.1": minorVersion = 1
        case "HTTP/1.0": minorVersion = 0
        default:
            if version.hasPrefix("HTTP/"), version.count == 8 {
                return .failure(HTTPRejection(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are supported"))
            }
            return .failure(bad("malformed HTTP version"))
        }

        var headers = HTTPHeaders()
        for line in lines {
            guard let first = line.utf8.first else { return .failure(bad("empty header line")) }
            if first == 0x20 || first == 0x09 { return .failure(bad("obsolete header line folding")) }
            guard let colon = line.firstIndex(of: ":") else { return .failure(bad("header line without ':'")) }
            let name = String(line[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { return .failure(bad("malformed header name")) }
            let value = HTTPText.trimmingWhitespace(line[line.index(after: colon)...])
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
                return .failure(bad("control character in header value"))
            }
            headers.append(name, value)
        }

        if !headers.values("transfer-encoding").isEmpty {
            return .failure(HTTPRejection(status: 501, reason: "transfer codings are not supported; send Content-Length"))
        }
        var contentLength = 0
        let lengths = Set(headers.values("content-length").flatMap { $0.split(separator: ",") }.map(HTTPText.trimmingWhitespace))
        if lengths.count > 1 { return .failure(bad("conflicting Content-Length")) }
        if let declared = lengths.first {
            guard !declared.isEmpty, declared.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(bad("malformed Content-Length"))
            }
            guard let length = Int(declared), length <= maxBodyLength else {
                return .failure(HTTPRejection(status: 413, reason: "request body too large"))
            }
            contentLength = length
        }
        return .success(HTTPRequestHead(method: method, target: target, minorVersion: minorVersion,
                                        headers: headers, contentLength: contentLength))
    }

    private static func bad(_ reason: String) -> HTTPRejection {
        HTTPRejection(status: 400, reason: reason)
    }

    /// RFC 9110 `tchar`.
    private static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
    }
}
