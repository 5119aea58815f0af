/// Decides which provider, if any, a request URL belongs to.
///
/// This is the check that keeps a token from leaking to the wrong server, so it
/// compares whole origins exactly (scheme, host and port) and never by prefix or
/// suffix: `https://api.example.com.evil.com` is not `https://api.example.com`.
/// A URL that `Origin` cannot parse matches nothing.
public struct OriginMatcher: Sendable {
    private let index: [Origin: String]

    /// The first provider listing an origin wins; configuration rejects overlaps anyway.
    public init(_ table: [(provider: String, origins: [Origin])]) {
        var index: [Origin: String] = [:]
        for entry in table {
            for origin in entry.origins where index[origin] == nil { index[origin] = entry.provider }
        }
        self.index = index
    }

    /// The provider configured for the URL's origin, or `nil`.
    public func provider(for url: String) -> String? {
        guard let origin = Origin(url: url) else { return nil }
        return index[origin]
    }

    /// The provider configured for an origin already parsed, or `nil`.
    public func provider(for origin: Origin) -> String? { index[origin] }

    /// Whether `url` is on one of `provider`'s own origins (and no earlier provider's).
    public func allows(provider: String, url: String) -> Bool {
        self.provider(for: url) == provider
    }
}
