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
    /// Seconds a device code (and its user code) stays valid (RFC 8628 `expires_in`).
    public var deviceCodeLifetime: Int
    /// Seconds a device must wait between polls (RFC 8628 `interval`) for codes issued
    /// from now on; tests lower it (`setDeviceInterval`) to keep polling fast.
    public var deviceInterval: Int
    /// Whether `/authorize` refuses a request whose scope has `openid` but no `nonce`
    /// (`invalid_request`, "nonce required"), as some OpenID providers do. A nonce
    /// that is sent is echoed in the ID token either way.
    public var requireNonce: Bool
    /// RFC 8707 `resource` values the token endpoint accepts (besides its own protected
    /// API, `ISSUER/api`); any other is refused with `invalid_target`.
    public var resources: [String]
    /// `audience` values the token endpoint accepts; any other is refused with `invalid_target`.
    public var audiences: [String]
    /// Scopes a client may ask for with client_credentials; a client not listed may ask for any.
    /// A scope outside the list is refused with `invalid_scope`.
    public var clientScopes: [String: [String]]
    /// Per client: authorization requests must be pushed (RFC 9126), a public key for
    /// `private_key_jwt`, FAPI 2.0's refusals. `cli-par` (public) must push by default.
    var clientPolicies: [String: ClientPolicy] = ["cli-par": ClientPolicy(requirePAR: true)]
    /// Issuers (`http://127.0.0.1:PORT`) whose ID-JAGs the jwt-bearer grant accepts, verified with the keys at their
    /// `/jwks`: the issuer then plays an API's authorization server beside an enterprise IdP
    /// (draft-ietf-oauth-identity-assertion-authz-grant). Empty: no jwt-bearer grant, and its metadata does not list it.
    public var trustedIssuers: [String] = []

    public init(
        users: [String: String] = ["alice": "wonderland", "bob": "builder"],
        clients: [String: String?] = ["cli": nil, "svc": "svc-secret", "demo": nil, "cli-par": nil],
        accessTokenLifetime: Int = 3600,
        refreshTokenReuseGrace: Int = 0,
        deviceCodeLifetime: Int = 600,
        deviceInterval: Int = 5,
        requireNonce: Bool = false,
        resources: [String] = ["https://api.example.com", "https://files.example.com"],
        audiences: [String] = ["api", "files"],
        clientScopes: [String: [String]] = ["svc": ["read", "write"]]
    ) {
        self.users = users
        self.clients = clients
        self.accessTokenLifetime = accessTokenLifetime
        self.refreshTokenReuseGrace = refreshTokenReuseGrace
        self.deviceCodeLifetime = deviceCodeLifetime
        self.deviceInterval = deviceInterval
        self.requireNonce = requireNonce
        self.resources = resources
        self.audiences = audiences
        self.clientScopes = clientScopes
    }
}
