#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// Enterprise-Managed Authorization (draft-ietf-oauth-identity-assertion-authz-grant; MCP ext-auth): the API's
/// token without a browser, from the enterprise IdP's session (`from`) in two steps — (a) RFC 8693 exchange at the
/// IdP of its ID token for an ID-JAG whose audience is the API's authorization server (`issuer`) and resource the
/// API, as the IdP's client; (b) the jwt-bearer grant at that server with the ID-JAG, as this provider's client.
/// Like `tokenExchange`, no login of its own: renewing runs both steps again. Errors name their step.
struct IDJAGProvider: DerivedLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys + ["from", "resource"], required: ["from", "issuer"], discoverable: nil, fields: [],
        canRefresh: { _, _ in true },  // by asking for another ID-JAG
        makeProvider: { IDJAGProvider(config: $0.config, oauth: $0.oauth, revokeTimeout: $0.revokeTimeout, subjects: $0.subjects) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double
    let subjects: SubjectTokens

    /// The authorization server's issuer (the ID-JAG's audience) and the API (its resource).
    var authorizationServer: String { config.learned?.issuer ?? config.issuer ?? "" }
    var resource: String? { config.learned?.resource ?? config.subject?.resource }

    /// Both steps for a token of `shape` (its scopes and resource replace the configured ones).
    func obtain(_ shape: TokenShape, login: LoginContext?) async throws(AuthError) -> Session {
        guard let from = config.subject?.from else { throw AuthError.unavailable(config, "no identity provider is configured") }
        let idToken = try await subjects.token(of: config, .idToken, from: from, login: login)
        let scopes = shape.scopes.isEmpty ? config.scopes : shape.scopes
        let resource = shape.resource ?? resource
        let jag = try await idJag(idToken.presented.token, from: from, resource: resource, scopes: scopes)
        return try TokenExchangeProvider.session(await oauth.grant(TokenExchange.jwtBearerPairs(assertion: jag, resource: resource, scopes: scopes)),
                                                 oauth, idToken, step: .jwtBearer)
    }

    /// Step (a): the ID-JAG, from the IdP's token endpoint, the IdP's client authenticating.
    private func idJag(_ idToken: String, from: String, resource: String?, scopes: [String]) async throws(AuthError) -> String {
        let idp = try subjects.client(of: from, for: config)
        let pairs = TokenExchange.idJagPairs(idToken: idToken, authorizationServer: authorizationServer, resource: resource, scopes: scopes)
        let endpoint: String?
        do { endpoint = try await idp.endpoints().token } catch { throw AuthError.exchangeFailed(config, .idJag, error.message) }
        guard let endpoint else { throw AuthError.exchangeFailed(config, .idJag, "\(from) has no token endpoint configured or discovered") }
        let response: HTTPResponse
        do {
            response = try await idp.postForm(endpoint, pairs)
        } catch {
            switch error { case .transient(let why): throw AuthError.exchangeFailed(config, .idJag, why) }
        }
        switch TokenExchange.idJag(from: response) {
        case .issued(let jag): return jag
        case .notAnIDJAG(let why): throw AuthError.exchangeFailed(config, .idJag, why, malformed: true)
        case .result(let result): throw TokenExchangeProvider.failure(result, config, step: .idJag)
        }
    }
}
