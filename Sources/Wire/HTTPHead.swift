/// Header fields in arrival order with case-insensitive lookup.
///
/// Kept as a list, not a dictionary, so repeated fields stay visible: two
/// different `Content-Length` values must be rejected, not silently merged.
public struct HTTPHeaders: Sendable {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// The first value of `name` (compared case-insensitively).
    public func value(_ name: String) -> String? {
        fields.first { HTTPText.equalIgnoringCase($0.name, name) }?.value
    }

    public func values(_ name: String) -> [String] {
        fields.filter { HTTPText.equalIgnoringCase($0.name, name) }.map(\.value)
    }

    /// The comma-separated tokens of every `name` field, lowercased (`Connection`, `Expect`).
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { HTTPText.trimmingWhitespace($0).lowercased() }
    }
}

/// Where an HTTP/1.x request head ends in the bytes read so far: the one rule the dev issuer's
/// server and the agent's redirect listener both read requests by. Only CRLF CRLF ends a head;
/// a lone LF is not a line end here (RFC 9112 §2.2 allows it, neither reader ever did).
public enum HTTPHeadScan: Sendable, Equatable {
    /// No blank line yet: read more, then scan again from `resumeAt` (a blank line may straddle reads).
    case incomplete(resumeAt: Int)
    /// The head is the first `length` bytes, without the blank line; whatever follows starts at `length + 4`.
    case complete(length: Int)
    /// The head and its blank line do not fit in the limit: refuse the request rather than keep reading.
    case tooLarge

    /// Scans `bytes` from `from` for the blank line, allowing at most `limit` bytes of head and blank line.
    public static func scan(_ bytes: [UInt8], from: Int = 0, limit: Int) -> HTTPHeadScan {
        var i = max(0, from)
        while i + 3 < bytes.count {
            if bytes[i] == 0x0D, bytes[i + 1] == 0x0A, bytes[i + 2] == 0x0D, bytes[i + 3] == 0x0A {
                return i + 4 > limit ? .tooLarge : .complete(length: i)
            }
            i += 1
        }
        return bytes.count > limit ? .tooLarge : .incomplete(resumeAt: max(0, bytes.count - 3))
    }
}

/// Why a request head was refused; `status` is the answer a server owes (400, or 505 for a version it
/// does not speak), `reason` a short text for the client, never the offending bytes.
public struct HTTPHeadError: Error, Sendable, Equatable {
    public var status: Int
    public var reason: String

    static func bad(_ reason: String) -> HTTPHeadError { HTTPHeadError(status: 400, reason: reason) }
}

/// The request line and header fields of an HTTP/1.x request, parsed strictly.
///
/// Strict because the dev issuer sits behind test suites that probe clients' error handling and the
/// redirect listener faces any local process: anything ambiguous (obsolete line folding, a header
/// line without a colon, control characters) is refused rather than guessed at. Body framing
/// (`Content-Length`, transfer codings) is the reader's business: the listener reads no body.
public struct HTTPRequestHead: Sendable {
    public var method: String
    /// The request target as sent, query included.
    public var target: String
    /// 0 or 1: HTTP/1.0 or HTTP/1.1.
    public var minorVersion: Int
    public var headers: HTTPHeaders

    /// Parses the bytes before the blank line (without the final CRLF CRLF); lines end with CRLF.
    public static func parse(_ bytes: ArraySlice<UInt8>) -> Result<HTTPRequestHead, HTTPHeadError> {
        let text = String(decoding: bytes, as: UTF8.self)
        // Decoding replaces invalid sequences, so unchanged bytes mean valid UTF-8.
        guard text.utf8.elementsEqual(bytes) else { return .failure(.bad("request head is not UTF-8")) }
        // CR LF is one Character, so this splits at CRLF only, never at a lone CR or LF.
        var lines = text.split(separator: "\r\n" as Character, omittingEmptySubsequences: false)
        let requestLine = lines.removeFirst()

        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .failure(.bad("malformed request line")) }
        let method = String(parts[0])
        let target = String(parts[1])
        let version = parts[2]
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else { return .failure(.bad("malformed method")) }
        guard target.hasPrefix("/") || target == "*", target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(.bad("malformed request target"))
        }
        let minorVersion: Int
        switch version {
        case "HTTP/1.1": minorVersion = 1
        case "HTTP/1.0": minorVersion = 0
        default:
            if version.hasPrefix("HTTP/"), version.count == 8 {
                return .failure(HTTPHeadError(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are supported"))
            }
            return .failure(.bad("malformed HTTP version"))
        }

        var headers = HTTPHeaders()
        for line in lines {
            guard let first = line.utf8.first else { return .failure(.bad("empty header line")) }
            if first == 0x20 || first == 0x09 { return .failure(.bad("obsolete header line folding")) }
            guard let colon = line.firstIndex(of: ":") else { return .failure(.bad("header line without ':'")) }
            let name = String(line[..<colon])
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else { return .failure(.bad("malformed header name")) }
            let value = HTTPText.trimmingWhitespace(line[line.index(after: colon)...])
            guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
                return .failure(.bad("control character in header value"))
            }
            headers.append(name, value)
        }
        return .success(HTTPRequestHead(method: method, target: target, minorVersion: minorVersion, headers: headers))
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
