#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import ES256
import Wire

/// A `fetch` request as a host gives it: the request adapter and the retrier of the practice
/// this project grew from, in one call — sign with the `sign` rules, send, and after a 401 for
/// the token that was sent, refresh once (the `refresh` rule) and resend once
/// (`AuthService+Fetch.swift` does it).
public struct FetchRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Seconds for each exchange with the API (not for a refresh, which has its own timeout).
    public var timeout: Double
    public var maxResponseBytes: Int

    public static let defaultTimeout = 30.0
    /// One millisecond, the transport's resolution: a shorter timeout cannot be honoured.
    public static let minimumTimeout = 0.001
    public static let defaultMaxResponseBytes = 10 << 20
    /// Same-origin redirects followed before the last response is returned as is.
    static let maxRedirects = 5

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                timeout: Double = defaultTimeout, maxResponseBytes: Int = defaultMaxResponseBytes) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

/// The checks on a host's header fields, shared by the RPC's `fetch` and `auth-agent fetch -H`.
extension FetchRequest {
    public enum HeaderRefusal: Sendable, Equatable {
        /// The name is not an RFC 9110 token.
        case notAToken
        /// The value contains CR, LF or NUL, which would end the header line.
        case unsafeValue
        /// A field that frames or routes the request (`reservedHeaderNames`, `Proxy-*`): the agent's
        /// HTTP client sets those. A host's `Host` on a signed request could route the token to
        /// another tenant of a shared ingress; `Transfer-Encoding` or `Content-Length` could
        /// smuggle a second request behind the first.
        case reserved
    }

    public static let reservedHeaderNames: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "te", "upgrade"]
    /// Whether `method` can be a request's method: an RFC 9110 token, as the RPC's `fetch` and the
    /// command line's `-X` both require (a DPoP proof names it, a request line carries it).
    public static func isMethod(_ method: String) -> Bool { HTTPRequestChecks.isMethod(method) }

    public static func refusal(name: String, value: String) -> HeaderRefusal? {
        guard HTTPRequestChecks.isToken(name) else { return .notAToken }
        let lowered = name.lowercased()
        if reservedHeaderNames.contains(lowered) || lowered.hasPrefix("proxy-") { return .reserved }
        return HTTPRequestChecks.isHeaderSafe(value) ? nil : .unsafeValue
    }
}

public struct FetchResponse: Sendable, Equatable {
    public var status: Int
    /// Lowercased names; repeated fields joined with ", ".
    public var headers: [String: String]
    public var body: [UInt8]
    public var provider: String?
    public var signed: Bool
    /// Whether the request was sent again after a 401 and a refresh.
    public var retried: Bool
    /// Set when the API wants a login the agent did not run: an uncovered URL's `401` with a
    /// Bearer challenge, or a learned resource's `403 insufficient_scope` (step-up).
    public var login: LoginHint?

    /// The body as text when the content type is textual and the bytes are UTF-8; else nil (send base64).
    public var textBody: String? {
        guard Self.isTextual(contentType: headers["content-type"]) else { return nil }
        return String(validating: body, as: UTF8.self)
    }

    /// `text/*`, JSON, XML (including `+json`/`+xml` types), JavaScript and form bodies; no content type is not text.
    static func isTextual(contentType: String?) -> Bool {
        guard let contentType else { return false }
        // Not omitting empty pieces: an empty value, or one that starts with ';', still has a first piece.
        let type = HTTPText.trimmingWhitespace(contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0])
            .lowercased()
        if type.hasPrefix("text/") || type.hasSuffix("+json") || type.hasSuffix("+xml") { return true }
        return ["application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded"].contains(type)
    }
}

/// Where a redirect leads, if the agent follows it: only within the origin that
/// was authorized, so the `Authorization` header never travels to another origin.
enum RedirectRule {
    struct Next: Equatable {
        let method: String
        let url: String
        let keepsBody: Bool
    }

    static func next(status: Int, location: String?, from url: String, method: String) -> Next? {
        guard [301, 302, 303, 307, 308].contains(status), let location, let target = sameOrigin(location, from: url) else { return nil }
        // As browsers do: 303, and 301/302 after a POST, continue as a GET without the body.
        if status == 303 || ((status == 301 || status == 302) && method == "POST") {
            return Next(method: method == "HEAD" ? "HEAD" : "GET", url: target, keepsBody: false)
        }
        return Next(method: method, url: target, keepsBody: true)
    }

    /// `reference` (absolute, or relative to `url` as RFC 3986 §5 resolves it) when it stays on
    /// `url`'s origin; nil otherwise. Where a server sends the agent next — a redirect, the HTTP+SSE
    /// transport's `endpoint` — the token follows only within the origin it was sent to.
    static func sameOrigin(_ reference: String, from url: String) -> String? {
        guard let base = URL(string: url), let target = URL(string: reference, relativeTo: base)?.absoluteURL,
              let from = Origin(url: url), let to = Origin(url: target.absoluteString), from == to else { return nil }
        return target.absoluteString
    }
}
