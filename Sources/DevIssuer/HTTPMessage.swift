import Foundation
import JSON

/// Header fields in arrival order with case-insensitive lookup.
///
/// Kept as a list, not a dictionary, so repeated fields stay visible: two
/// different `Content-Length` values must be rejected, not silently merged.
struct HTTPHeaders: Sendable {
    private(set) var fields: [(name: String, value: String)] = []

    mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// The first value of `name` (compared case-insensitively).
    func value(_ name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// The comma-separated tokens of every `name` field, lowercased (`Connection`, `Expect`).
    func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }
    }
}

/// One parsed HTTP/1.x request with its whole body in memory (bodies are capped).
struct HTTPRequest: Sendable {
    var method: String
    /// The request target as sent, query included.
    var target: String
    var minorVersion: Int
    var headers: HTTPHeaders
    var body: [UInt8]

    var path: String {
        if let q = target.firstIndex(of: "?") { return String(target[..<q]) }
        return target
    }

    var query: String? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: q)...])
    }

    /// HTTP/1.1 stays open unless the client says `close`; HTTP/1.0 only if it asks for `keep-alive`.
    var wantsKeepAlive: Bool {
        let connection = headers.tokens("connection")
        if minorVersion == 0 { return connection.contains("keep-alive") }
        return !connection.contains("close")
    }

    /// The media type of the body without parameters, lowercased; `nil` when absent.
    var mediaType: String? {
        guard let raw = headers.value("content-type") else { return nil }
        let type = raw.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The credentials of an `Authorization: <scheme> <credentials>` header when the
    /// scheme matches case-insensitively.
    func authorization(scheme: String) -> String? {
        guard let raw = headers.value("authorization") else { return nil }
        let trimmed = raw.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        guard trimmed[..<space].caseInsensitiveCompare(scheme) == .orderedSame else { return nil }
        let credentials = trimmed[space...].trimmingCharacters(in: .whitespaces)
        return credentials.isEmpty ? nil : credentials
    }

    var bearerToken: String? { authorization(scheme: "Bearer") }

    /// The body parsed as JSON, or `nil` when it is not valid JSON.
    var jsonBody: JSONValue? { try? JSONParser.parse(body) }
}

/// A response to write: status, extra headers and a body.
/// `Content-Length` and `Connection` are added when it is serialized.
struct HTTPResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response, the body of every API endpoint (the browser pages use `HTMLPage`).
    static func json(_ status: Int, _ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: JSONSerializer.bytes(value))
    }

    /// `302 Found` to `location`, how the authorization endpoint hands the browser back to the client.
    static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: [("Location", location), ("Cache-Control", "no-store")])
    }

    /// `{"error": code}` plus an optional `error_description`, the shape OAuth and this issuer's JSON APIs share.
    static func error(_ status: Int, _ code: String, _ description: String? = nil,
                      headers: [(name: String, value: String)] = []) -> HTTPResponse {
        var object: JSONObject = ["error": .string(code)]
        if let description { object["error_description"] = .string(description) }
        return json(status, .object(object), headers: headers)
    }

    /// The bytes on the wire. Bodies always carry `Content-Length` (except where
    /// HTTP forbids one), so clients never have to wait for EOF.
    func serialized(keepAlive: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(HTTPResponse.reasonPhrase(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if status >= 200, status != 204, status != 304 { head += "Content-Length: \(body.count)\r\n" }
        head += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8) + body
    }

    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: return "Continue"
        case 200: return "OK"
        case 201: return "Created"
        case 302: return "Found"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}

/// `application/x-www-form-urlencoded` decoding, for OAuth request bodies and the
/// client id and secret inside HTTP Basic credentials (RFC 6749 §2.3.1), and
/// encoding, for the parameters the authorization endpoint adds to a redirect URI.
enum FormURLEncoding {
    /// `name=value&…` with everything but RFC 3986 unreserved characters percent-escaped.
    static func encode(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { escape($0.name) + "=" + escape($0.value) }.joined(separator: "&")
    }

    /// The pairs as a dictionary; `nil` when decoding fails or a name repeats
    /// (RFC 6749 §3.1: request parameters MUST NOT be included more than once).
    static func uniqueParameters(_ bytes: [UInt8]) -> [String: String]? {
        guard let pairs = decode(bytes) else { return nil }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters.updateValue(value, forKey: name) == nil else { return nil }
        }
        return parameters
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return out
    }

    /// Name/value pairs in order, or `nil` when a percent escape or the UTF-8 is invalid.
    static func decode(_ bytes: [UInt8]) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for part in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name: ArraySlice<UInt8>
            let value: ArraySlice<UInt8>
            if let eq = part.firstIndex(of: UInt8(ascii: "=")) {
                name = part[part.startIndex..<eq]
                value = part[(eq + 1)...]
            } else {
                name = part
                value = []
            }
            guard let n = unescape(name), let v = unescape(value) else { return nil }
            pairs.append((n, v))
        }
        return pairs
    }

    /// Decodes `+` as space and `%XX` escapes; `nil` on a bad escape or invalid UTF-8.
    static func unescape<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let c = bytes[i]
            if c == UInt8(ascii: "+") {
                out.append(0x20)
            } else if c == UInt8(ascii: "%") {
                let h = bytes.index(after: i)
                guard h != bytes.endIndex else { return nil }
                let l = bytes.index(after: h)
                guard l != bytes.endIndex, let hi = hexValue(bytes[h]), let lo = hexValue(bytes[l]) else { return nil }
                out.append(hi << 4 | lo)
                i = l
            } else {
                out.append(c)
            }
            i = bytes.index(after: i)
        }
        return String(bytes: out, encoding: .utf8)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
