/// Who may log in to a `DevIssuer` and how its tokens behave.
///
/// Defaults are fixed, well-known test credentials so demos and test suites in
/// any language can log in without configuration. Never use them anywhere real.
public struct DevIssuerOptions: Sendable {
    /// Username to password.
    public var users: [String: String]
    /// OAuth client id to secret; a `nil` secret makes a public client (no secret, no client_credentials).
    public var clients: [String: String?]
    /// Seconds from issue to `exp` for session tokens and access tokens.
    public var accessTokenLifetime: Int
    /// Seconds an already-rotated refresh token is still accepted (answered with the
    /// same successor tokens, as Okta's and Auth0's grace periods do). 0 means any reuse
    /// revokes the token's whole family.
    public var refreshTokenReuseGrace: Int

    public init(
        users: [String: String] = ["alice": "wonderland", "bob": "builder"],
        clients: [String: String?] = ["cli": nil, "svc": "svc-secret", "demo": nil],
        accessTokenLifetime: Int = 3600,
        refreshTokenReuseGrace: Int = 0
    ) {
        self.users = users
        self.clients = clients
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenReuseGrace = refreshTokenReuseGrace
    }
}
