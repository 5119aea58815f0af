import Foundation
import JSON

/// OAuth 2.0 resource-owner password grant (RFC 6749 §4.3): the agent, not the
/// host, sends the password to the token endpoint and forgets it.
struct PasswordProvider: LoginProvider {
    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard case .password(let username, let password)? = credentials else {
            throw AuthError(.invalidCredentials, "\(config.displayName) needs a username and a password.", provider: config.id)
        }
        switch await oauth.grant([("grant_type", "password"), ("username", username), ("password", password)] + oauth.scopePairs()) {
        case .success(let token):
            return await oauth.finish(token, fallbackUser: ["username": .string(username)])
        case .rejected:
            throw AuthError(.invalidCredentials, "\(config.displayName) rejected the username or password.", provider: config.id)
        case .transient(let why):
            throw AuthError(.authServerUnavailable, "\(config.displayName) is unavailable: \(why).", provider: config.id)
        }
    }

    func refresh(_ session: Session) async -> RefreshOutcome { await oauth.refresh(session) }

    func revoke(_ session: Session) async -> Bool { await oauth.revoke(session, timeout: revokeTimeout) }
}

/// OAuth 2.0 client credentials grant (RFC 6749 §4.4): a service identity, no
/// user input. "Refreshing" runs the grant again.
struct ClientCredentialsProvider: LoginProvider {
    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        switch await oauth.grant([("grant_type", "client_credentials")] + oauth.scopePairs()) {
        case .success(let token):
            return oauth.session(from: token, previous: nil, user: ["clientId": .string(config.clientId ?? "")])
        case .rejected:
            throw AuthError(.invalidCredentials, "\(config.displayName) rejected the client credentials.", provider: config.id)
        case .transient(let why):
            throw AuthError(.authServerUnavailable, "\(config.displayName) is unavailable: \(why).", provider: config.id)
        }
    }

    func refresh(_ session: Session) async -> RefreshOutcome {
        switch await oauth.grant([("grant_type", "client_credentials")] + oauth.scopePairs()) {
        case .success(let token): return .refreshed(oauth.session(from: token, previous: session, user: nil))
        case .rejected(let e): return .rejected(e)
        case .transient(let why): return .transient(why)
        }
    }

    func revoke(_ session: Session) async -> Bool { await oauth.revoke(session, timeout: revokeTimeout) }
}

/// A token the user pastes (a personal access token). It never expires on its
/// own; a 401 on it means the server stopped accepting it.
struct StaticTokenProvider: LoginProvider {
    let config: ProviderConfig
    let oauth: OAuthClient
    let clock: Clock

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard case .token(let token)? = credentials, !token.isEmpty else {
            throw AuthError(.invalidCredentials, "\(config.displayName) needs a token.", provider: config.id)
        }
        var user: JSONValue = [:]
        if config.userinfoEndpoint != nil {
            // The only way to check a pasted token is to use it.
            let info = await oauth.user(accessToken: token, tokenType: "Bearer", idToken: nil, fallback: .null)
            if info == .null {
                throw AuthError(.invalidCredentials, "\(config.displayName) did not accept the token.", provider: config.id)
            }
            user = info
        }
        return Session(accessToken: token, tokenType: "Bearer", refreshToken: nil, expiresAt: nil, idToken: nil,
                       user: user, obtainedAt: clock.now(), generation: 1)
    }

    func refresh(_ session: Session) async -> RefreshOutcome { .unsupported }

    func revoke(_ session: Session) async -> Bool { false }
}
