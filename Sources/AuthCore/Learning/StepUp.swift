/// What a learned resource's `403` with `WWW-Authenticate: Bearer error="insufficient_scope"`
/// asks for (MCP 2025-11-25 step-up): decided in one place for `fetch` and the `mcp` bridge.
public struct ScopeChallenge: Sendable, Equatable {
    public var provider: String
    /// The scopes the provider logs in for now, then those the resource asked for that it lacks.
    public var scopes: [String]

    /// Whether the resource asked only for scopes the provider already logs in for: logging in
    /// again would ask for the same ones, so there is nothing to step up to.
    public var asksNothingNew: Bool
}

extension AuthService {
    /// The step-up a resource's `403 insufficient_scope` for the scopes `asked` (as `ServerChallenge`
    /// read them) asks of `config`; nil unless it is a learned provider.
    static func scopeChallenge(_ config: ProviderConfig, asked: [String]) -> ScopeChallenge? {
        guard config.learned != nil else { return nil }
        let scopes = config.scopes + asked.filter { !config.scopes.contains($0) }
        return ScopeChallenge(provider: config.id, scopes: scopes, asksNothingNew: scopes == config.scopes)
    }

    /// The step-up a `403 insufficient_scope` for the scopes `asked` from `url` asks of the provider
    /// covering it, as this process knows that provider now (after `checkStore`, with another process's step-up).
    public func scopeChallenge(url: String, asked: [String]) -> ScopeChallenge? {
        guard let id = provider(forURL: url, explicit: nil), let config = providerConfig(id) else { return nil }
        return Self.scopeChallenge(config, asked: asked)
    }

    /// Logs in to the challenge's learned provider again for its scopes, and keeps them.
    public func stepUp(_ challenge: ScopeChallenge, flow: Flow? = nil, context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        try await stepUp(challenge.provider, scopes: challenge.scopes, flow: flow, context: context)
    }
}
