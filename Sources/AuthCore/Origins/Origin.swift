/// The scheme, host and port a URL talks to: the unit a bearer token is scoped to.
///
/// Tokens are attached to requests only when the request's origin equals one a
/// provider is configured for, so this parser is deliberately strict and simple
/// rather than a general URL parser: it only has to agree with the HTTP stack
/// about *which server* a URL reaches, and it refuses anything where parsers are
/// known to disagree (backslashes, whitespace, control characters, percent-encoded
/// hosts, non-ASCII hosts, numeric hosts that are not dotted quads). The userinfo
/// ends at the *last* `@` of the authority, as RFC 3986 and WHATWG parsers agree,
/// so `https://api.example.com@evil.com` is an origin of `evil.com`.
public struct Origin: Hashable, Sendable, CustomStringConvertible {
    /// `http` or `https`, lowercased.
    public let scheme: String
    /// Lowercased host name, dotted-quad IPv4, or bracketed canonical IPv6 (`[::1]`).
    public let host: String
    /// Always explicit: 80 or 443 when the URL left it out.
    public let port: Int

    /// Parses an absolute `http`/`https` URL (or a bare origin); `nil` when the
    /// text is not one or is ambiguous.
    public init?(url: String) {
        guard let parts = URLAuthority(url) else { return nil }
        self.scheme = parts.scheme
        self.host = parts.host
        self.port = parts.port
    }

    init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
    }

    /// `https://api.example.com`, with the port only when it is not the scheme's default.
    public var description: String {
        port == Origin.defaultPort(for: scheme) ? "\(scheme)://\(host)" : "\(scheme)://\(host):\(port)"
    }

    /// True for `localhost`, `127.0.0.0/8` and `[::1]`: traffic that never leaves the machine.
    public var isLoopback: Bool {
        if host == "localhost" || host == "[::1]" { return true }
        guard let octets = URLAuthority.dottedQuad(host) else { return false }
        return octets[0] == 127
    }

    /// Whether a bearer token may be sent here: TLS, or a connection that stays on this machine.
    public var isSecureForBearer: Bool { scheme == "https" || isLoopback }

    static func defaultPort(for scheme: String) -> Int? {
        switch scheme {
        case "http": return 80
        case "https": return 443
        default: return nil
        }
    }
}
