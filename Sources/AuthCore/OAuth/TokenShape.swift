/// What a request asks of its access token beyond the session's own (issue 15):
/// narrower scopes (RFC 6749 §6), an audience, a resource (RFC 8707).
///
/// Normalised on the way in, so that two requests asking for the same token are
/// equal and hash alike (shaped tokens are cached under their shape): scopes are
/// sorted and de-duplicated, and empty strings ask for nothing. Checking that
/// `resource` is an absolute URI is the protocol's job, which can name the param.
public struct TokenShape: Hashable, Sendable, CustomStringConvertible {
    /// Sorted, de-duplicated; empty = no `scope` parameter (the session's own scopes).
    public let scopes: [String]
    public let audience: String?
    /// An absolute URI (RFC 8707).
    public let resource: String?

    /// The session's own token: requests exactly what an unshaped refresh does.
    public static let none = TokenShape()

    public var isNone: Bool { scopes.isEmpty && audience == nil && resource == nil }

    public init(scopes: [String] = [], audience: String? = nil, resource: String? = nil) {
        // No `Set` for the empty shape every unshaped token uses: instantiating it was paid at every start.
        self.scopes = scopes.isEmpty ? [] : Set(scopes.filter { !$0.isEmpty }).sorted()
        self.audience = audience?.isEmpty == false ? audience : nil
        self.resource = resource?.isEmpty == false ? resource : nil
    }

    /// A part of a requested shape, for `problem` to name as its caller does (the
    /// protocol's `'scopes[1]'`, the command line's `--scope`).
    public enum Part { case scope(Int), audience, resource }

    /// Why a shape cannot be asked for, nil when it can: the one check of the
    /// protocol's `scopes`/`audience`/`resource` and the command line's flags.
    public static func problem(scopes: [String], audience: String?, resource: String?, naming name: (Part) -> String) -> String? {
        for (i, scope) in scopes.enumerated() where scope.isEmpty || scope.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value > 0x7E }) {
            return "\(name(.scope(i))) must be a scope token: visible ASCII without spaces (RFC 6749 §3.3)"
        }
        if audience?.isEmpty == true { return "\(name(.audience)) must not be empty" }
        if let resource, let problem = ProviderConfig.resourceProblem(resource) { return "\(name(.resource)): \(problem)" }
        return nil
    }

    /// The token request's parameters for this shape, in this order: `scope`
    /// (space-separated, RFC 6749 §3.3), `resource`, `audience`; none for `.none`.
    var formPairs: [(String, String)] {
        var pairs: [(String, String)] = []
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: " "))) }
        if let resource { pairs.append(("resource", resource)) }
        if let audience { pairs.append(("audience", audience)) }
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
