#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// A token the user pastes (a personal access token). It never expires on its
/// own; a 401 on it means the server stopped accepting it.
struct StaticTokenProvider: LoginProvider {
    static let descriptor = FlowDescriptor(
        keys: [], required: [], discoverable: nil, fields: [LoginField(name: "token", label: "Token", secret: true)],
        canRefresh: { _, _ in false },
        makeProvider: { StaticTokenProvider(config: $0.config, oauth: $0.oauth, clock: $0.clock) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let clock: Clock

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard case .token(let token)? = credentials, !token.isEmpty else {
            throw AuthError.invalidCredentials(config, .needsToken)
        }
        guard AuthorizationToken.isValid(token) else {
            throw AuthError.invalidCredentials(config, .tokenNotAHeaderValue)
        }
        var user: JSONValue = [:]
        if config.userinfoEndpoint != nil {
            // The only way to check a pasted token is to use it.
            let info = await oauth.user(accessToken: token, tokenType: "Bearer", idToken: nil, key: nil, fallback: .null)
            if info == .null {
                throw AuthError.invalidCredentials(config, .tokenNotAccepted)
            }
            user = info
        }
        return Session(accessToken: token, tokenType: "Bearer", refreshToken: nil, expiresAt: nil, idToken: nil,
                       user: user, obtainedAt: clock.now())
    }

    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome { .unsupported }

    func revoke(_ session: Session) async -> Bool { false }
}
