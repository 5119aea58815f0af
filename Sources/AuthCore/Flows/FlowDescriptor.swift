import JSON

/// Everything particular to one flow, declared once in the flow's own file next
/// to its `LoginProvider`: the configuration keys it takes and requires, what a
/// login asks the user for, whether a session can be renewed without the user,
/// and how its provider is made. `Flow.descriptor` is the registry.
struct FlowDescriptor: Sendable {
    /// Configuration keys beyond `ProviderConfig.commonKeys`.
    let keys: [String]
    /// Keys that must be present.
    let required: [String]
    /// Endpoints that must be configured unless `issuer` is given to discover them
    /// (`tokenEndpoint` is implied); `nil` for flows without OAuth discovery.
    let discoverable: [String]?
    /// What a login asks the user for, in order (the `fields` of `status`).
    let fields: [LoginField]
    /// Whether the flow may be one of several of one provider, sharing its accounts: true
    /// for the flows that log a person in and whose sessions the OAuth refresh-token grant
    /// renews and RFC 7009 revokes, whichever of them logged the session in. The others
    /// renew their own way (a session API's endpoint, the client credentials grant again)
    /// or not at all (a pasted token, which a revocation must not touch).
    var sharesAccounts = false
    /// Whether a login waits for the person (a device code, a browser): such logins of one
    /// provider run one at a time across the user's processes (`AuthService.oneLogin`), and
    /// leave its logged-in accounts' requests running meanwhile.
    var waitsForThePerson = false
    /// Whether `session` can be renewed without the user.
    let canRefresh: @Sendable (ProviderConfig, Session) -> Bool
    let makeProvider: @Sendable (FlowContext) -> LoginProvider

    static let oauthKeys = ["tokenEndpoint", "revocationEndpoint", "userinfoEndpoint", "clientId", "clientSecret", "scopes", "issuer", "dpop", "clientAuth", "profile"]

    /// Refreshable when the session holds a refresh token: the OAuth flows with users.
    static let hasRefreshToken: @Sendable (ProviderConfig, Session) -> Bool = { _, session in session.refreshToken != nil }
}

/// One thing a login asks the user for.
public struct LoginField: Sendable, Equatable {
    public let name: String
    public let label: String
    /// Typed without echo, never stored.
    public let secret: Bool

    static let username = LoginField(name: "username", label: "Username", secret: false)
    static let password = LoginField(name: "password", label: "Password", secret: true)

    var json: JSONValue { ["name": .string(name), "label": .string(label), "secret": .bool(secret)] }
}

/// What a flow's provider is made from.
struct FlowContext: Sendable {
    let config: ProviderConfig
    let http: HTTPCalls
    let oauth: OAuthClient
    let clock: Clock
    /// Seconds a logout may spend telling the server.
    let revokeTimeout: Double
    let browser: BrowserLauncher
    /// The tokens of the provider a derived flow's tokens come from (`ProviderConfig.subject`).
    let subjects: SubjectTokens
}

extension Flow {
    /// The registry of flows: one line per flow, and the compiler asks for a new one.
    var descriptor: FlowDescriptor {
        switch self {
        case .session: return SessionAPIProvider.descriptor
        case .password: return PasswordProvider.descriptor
        case .clientCredentials: return ClientCredentialsProvider.descriptor
        case .token: return StaticTokenProvider.descriptor
        case .deviceCode: return DeviceCodeProvider.descriptor
        case .authorizationCode: return AuthorizationCodeProvider.descriptor
        case .tokenExchange: return TokenExchangeProvider.descriptor
        case .idJag: return IDJAGProvider.descriptor
        }
    }
}

/// The OAuth flows renew and revoke through their `OAuthClient` the same way.
protocol OAuthLoginProvider: LoginProvider {
    var oauth: OAuthClient { get }
    var revokeTimeout: Double { get }
}

extension OAuthLoginProvider {
    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome { await oauth.refresh(session, shape: shape) }

    func revoke(_ session: Session) async -> Bool { await oauth.revoke(session, timeout: revokeTimeout) }
}
