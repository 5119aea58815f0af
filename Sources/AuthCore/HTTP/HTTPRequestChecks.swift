#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The system's HTTP transport: libcurl loaded on first use on Linux, URLSession elsewhere.
#if os(Linux)
public typealias SystemHTTPTransport = CurlTransport
#else
public typealias SystemHTTPTransport = URLSessionTransport
#endif

/// Checks every transport applies before anything is sent.
enum HTTPRequestChecks {
    /// The request's origin and the URL Foundation reads, once the request passes the checks every
    /// transport makes before its library sees it: a URL that `Origin` and Foundation read alike,
    /// a method that is a token and header fields that cannot break a line, and some time to run.
    /// One function, so curl and URLSession refuse the same requests.
    static func checked(_ request: HTTPRequest) throws(HTTPTransportError) -> (origin: Origin, url: URL) {
        guard let origin = Origin(url: request.url), let url = URL(string: request.url), foundationAgrees(url, origin),
              isMethod(request.method),
              request.headers.allSatisfy({ isHeaderSafe($0.0) && isHeaderSafe($0.1) })
        else { throw .invalidURL }
        guard request.timeout > 0 else { throw .timedOut }
        return (origin, url)
    }

    /// An RFC 9110 token (`tchar`s: visible ASCII without delimiters): the request line carries the
    /// method between spaces, so anything else could split it or be read differently by a proxy.
    static func isMethod(_ method: String) -> Bool { isToken(method) }

    /// An RFC 9110 token: a method, or a header field's name.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// A `tchar`: visible ASCII but RFC 9110 §5.6.2's delimiters `"(),/:;<=>?@[\]{}`. A switch,
    /// not a `Set`: `sign` checks its method on every call, and hashing each byte was 2 % of it.
    static func isTokenByte(_ c: UInt8) -> Bool {
        switch c {
        case 0...0x20, 0x7F...: return false
        case UInt8(ascii: "\""), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: "/"),
             UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"),
             UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"), UInt8(ascii: "]"),
             UInt8(ascii: "{"), UInt8(ascii: "}"): return false
        default: return true
        }
    }

    /// No CR, LF or NUL: characters that would end a header line and start another.
    static func isHeaderSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }

    /// Whether Foundation's URL parser reads the same scheme, host and port as `Origin`,
    /// so the request goes where the origin check thought it would.
    static func foundationAgrees(_ url: URL, _ origin: Origin) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == origin.scheme, var host = url.host?.lowercased() else {
            return false
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.contains(":") {
            guard let canonical = URLAuthority.canonicalIPv6(host) else { return false }
            host = "[\(canonical)]"
        }
        return host == origin.host && (url.port ?? Origin.defaultPort(for: scheme)) == origin.port
    }
}
