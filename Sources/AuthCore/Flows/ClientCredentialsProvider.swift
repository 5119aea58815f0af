#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// OAuth 2.0 client credentials grant (RFC 6749 §4.4): a service identity, no
/// user input. "Refreshing" runs the grant again.
struct ClientCredentialsProvider: OAuthLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys, required: ["clientId"], discoverable: [], fields: [],
        canRefresh: { _, _ in true },  // by running the grant again
        makeProvider: { ClientCredentialsProvider(config: $0.config, oauth: $0.oauth, revokeTimeout: $0.revokeTimeout) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        let token = try await oauth.loginGrant(grant(.none), rejected: .clientCredentialsRejected)
        return oauth.session(from: token, previous: nil, user: ["clientId": .string(config.clientId ?? "")])
    }

    /// Runs the grant again; a shaped token is asked for directly (there is no refresh token to narrow).
    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome {
        if let refusal = config.shapeRefusal(shape) { return .notGranted(refusal) }
        return await oauth.renew(session, with: grant(shape))
    }

    /// The grant's parameters for `shape`: its scopes replace the configured ones;
    /// a shape without scopes asks for the configured ones, as the login did, so
    /// that "the session's own scopes" means the same as for a refresh token.
    private func grant(_ shape: TokenShape) -> [(String, String)] {
        [("grant_type", "client_credentials")] + (shape.scopes.isEmpty ? oauth.scopePairs() : []) + config.formPairs(shape)
    }
}
