#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// OAuth 2.0 resource-owner password grant (RFC 6749 §4.3): the agent, not the
/// host, sends the password to the token endpoint and forgets it.
struct PasswordProvider: OAuthLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys, required: ["clientId"], discoverable: [], fields: [.username, .password],
        sharesAccounts: true, canRefresh: FlowDescriptor.hasRefreshToken,
        makeProvider: { PasswordProvider(config: $0.config, oauth: $0.oauth, revokeTimeout: $0.revokeTimeout) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let revokeTimeout: Double

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard case .password(let username, let password)? = credentials else {
            throw AuthError.needsUsernameAndPassword(config)
        }
        let token = try await oauth.loginGrant([("grant_type", "password"), ("username", username), ("password", password)] + oauth.scopePairs(),
                                               rejected: .passwordRejected)
        return await oauth.finish(token, fallbackUser: ["username": .string(username)])
    }
}
