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

    /// Loopback (and `*.localhost`), link-local (`169.254.0.0/16`, `fe80::/10`), unspecified
    /// (`0.0.0.0/8`, `[::]`) or IPv4-mapped one of those: this machine or its link, where an API
    /// elsewhere must not be able to send the agent (what discovery refuses). Decided on the host
    /// text alone — a name that resolves to such an address is not caught.
    public var isLocalAddress: Bool { Self.isLocal(host: host) }

    static func isLocal(host: String) -> Bool {
        if host == "localhost" || host == "localhost." || host.hasSuffix(".localhost") || host.hasSuffix(".localhost.") { return true }
        if let octets = URLAuthority.dottedQuad(host) { return octets[0] == 127 || octets[0] == 0 || (octets[0] == 169 && octets[1] == 254) }
        guard host.hasPrefix("["), host.hasSuffix("]") else { return false }
        let v6 = host.dropFirst().dropLast().lowercased()
        if v6 == "::1" || v6 == "::" { return true }
        if v6.hasPrefix("::ffff:") { return isLocal(host: String(v6.dropFirst(7))) }
        // fe80::/10: the first group is fe80 to febf.
        let first = v6.prefix { $0 != ":" }
        return first.count == 4 && first.hasPrefix("fe") && first.dropFirst(2).first.map { "89ab".contains($0) } == true
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
