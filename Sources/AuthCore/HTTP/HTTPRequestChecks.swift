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
