/// What a request asks of its access token beyond the session's own: narrower
/// scopes (RFC 6749 §6), an `audience`, an RFC 8707 `resource`. The session's own
/// token is `TokenShape.none`; every other shape gets its own access token,
/// obtained with the session's refresh token (or, for client credentials, the
/// grant itself) and cached under the shape.
public struct TokenShape: Hashable, Sendable, CustomStringConvertible {
    /// Sorted and without duplicates, so that equal requests share one token; empty: no `scope` parameter.
    public let scopes: [String]
    public let audience: String?
    public let resource: String?

    public static let none = TokenShape()

    public init(scopes: [String] = [], audience: String? = nil, resource: String? = nil) {
        self.scopes = Array(Set(scopes)).sorted()
        self.audience = audience
        self.resource = resource
    }

    public var isNone: Bool { scopes.isEmpty && audience == nil && resource == nil }

    /// The token request's extra parameters.
    public var formPairs: [(String, String)] {
        var pairs: [(String, String)] = []
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: " "))) }
        if let audience { pairs.append(("audience", audience)) }
        if let resource { pairs.append(("resource", resource)) }
        return pairs
    }

    /// For messages and logs: `scope "a b", resource https://…`.
    public var description: String {
        var parts: [String] = []
        if !scopes.isEmpty { parts.append("scope \"\(scopes.joined(separator: " "))\"") }
        if let audience { parts.append("audience \(audience)") }
        if let resource { parts.append("resource \(resource)") }
        return parts.isEmpty ? "the session's own token" : parts.joined(separator: ", ")
    }
}
