#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// RFC 8693 token exchange whose subject is another provider's session (`from`): no login of its own — the
/// token is made when asked for, made again when stale or when the subject's session changed (`AuthService.decide`),
/// and ends with the subject's (`subjectLoggedOut`). By default at the subject's server as its client
/// (`SubjectConfig.resolve`). Renewing is exchanging again, under the refresh lock like any refresh.
struct TokenExchangeProvider: DerivedLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys + SubjectConfig.keys, required: ["from", "subjectTokenType"], discoverable: nil, fields: [],
        canRefresh: { _, _ in true },  // by exchanging again
        makeProvider: { TokenExchangeProvider(config: $0.config, oauth: $0.oauth, revokeTimeout: $0.revokeTimeout, subjects: $0.subjects) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double
    let subjects: SubjectTokens

    /// One exchange for a token of `shape` (its scopes, audience and resource replace the configured ones).
    func obtain(_ shape: TokenShape, login: LoginContext?) async throws(AuthError) -> Session {
        guard let subject = config.subject else { throw AuthError.unavailable(config, "no subject is configured") }
        let presented = try await subjects.token(of: config, subject.tokenType, from: subject.from, login: login)
        let actor = try await subject.actor.asyncMap { (actor) async throws(AuthError) in
            try await subjects.token(of: config, .accessToken, from: actor, login: login).presented
        }
        let pairs = TokenExchange.exchangePairs(subject: presented.presented, actor: actor, requestedTokenType: subject.requestedTokenType,
                                                audience: shape.audience ?? subject.audience, resource: shape.resource ?? subject.resource,
                                                scopes: shape.scopes.isEmpty ? config.scopes : shape.scopes)
        return try Self.session(await oauth.grant(pairs), oauth, presented, step: .tokenExchange)
    }

    /// The session a derived flow's last grant made: the subject's user, and the subject session it came from.
    static func session(_ result: TokenEndpointResult, _ oauth: OAuthClient, _ subject: SubjectToken, step: AuthError.ExchangeStep) throws(AuthError) -> Session {
        guard case .success(let token) = result else { throw failure(result, oauth.config, step: step) }
        var session = oauth.session(from: token, previous: nil, user: subject.user)
        session.subjectGeneration = subject.generation
        return session
    }

    /// The error of a grant's answer that brought no token, naming `step`.
    static func failure(_ result: TokenEndpointResult, _ config: ProviderConfig, step: AuthError.ExchangeStep) -> AuthError {
        switch result {
        case .success: return AuthError.exchangeFailed(config, step, "the answer is not the token asked for", malformed: true)
        case .rejected(let error, let description): return AuthError.exchangeRefused(config, step, ServerRefusal(error: error, description: description))
        case .transient(let why): return AuthError.exchangeFailed(config, step, why)
        case .malformed(let why): return AuthError.exchangeFailed(config, step, why, malformed: true)
        }
    }
}

extension Optional {
    /// `map` for an async transform that throws `AuthError`.
    func asyncMap<T>(_ transform: (Wrapped) async throws(AuthError) -> T) async throws(AuthError) -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
