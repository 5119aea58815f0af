#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Wire

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
        return HTTPText.trimmingWhitespace(type).lowercased()
    }

    /// The credentials of an `Authorization: <scheme> <credentials>` header when the
    /// scheme matches case-insensitively.
    func authorization(scheme: String) -> String? {
        guard let raw = headers.value("authorization") else { return nil }
        let trimmed = HTTPText.trimmingWhitespace(raw)
        guard let space = trimmed.firstIndex(of: " ") else { return nil }
        guard HTTPText.equalIgnoringCase(trimmed[..<space], scheme) else { return nil }
        let credentials = HTTPText.trimmingWhitespace(trimmed[space...])
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
        case 202: return "Accepted"
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
