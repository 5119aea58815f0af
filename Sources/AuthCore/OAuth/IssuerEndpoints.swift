import JSON

/// The endpoints an issuer's discovery document names, for `config add`: shown to the person
/// adding the provider and checked before anything is written, so a typo in the issuer or a
/// server that lacks the flow is found now rather than at the first login.
public struct IssuerEndpoints: Sendable, Equatable {
    /// Metadata names (RFC 8414) and their URLs, in the order they are shown; absent ones left out.
    public let endpoints: [(name: String, url: String)]

    static let names = ["authorization_endpoint", "device_authorization_endpoint", "token_endpoint", "revocation_endpoint", "userinfo_endpoint"]

    init(_ metadata: JSONObject) {
        endpoints = Self.names.compactMap { name in metadata[name]?.stringValue.map { (name, $0) } }
    }

    public static func == (a: IssuerEndpoints, b: IssuerEndpoints) -> Bool {
        a.endpoints.map(\.name) == b.endpoints.map(\.name) && a.endpoints.map(\.url) == b.endpoints.map(\.url)
    }

    /// Reads the issuer's metadata through the one `Discovery` (its candidate order and rules), as the agent will at login.
    public static func discover(issuer: String, transport: HTTPTransport) async throws(AuthError) -> IssuerEndpoints {
        if let problem = ProviderConfig.endpointProblem(issuer) { throw AuthError.issuerUnusable(issuer, problem) }
        let discovery = Discovery(http: HTTPCalls(transport: transport, timeout: 10))
        return IssuerEndpoints(try await discovery.metadata(issuer: issuer))
    }

    public func url(_ name: String) -> String? { endpoints.first { $0.name == name }?.url }

    /// Endpoints the agent would refuse to call (plain http off loopback, a user name in the URL…).
    public var problems: [String] {
        endpoints.compactMap { e in ProviderConfig.endpointProblem(e.url).map { "\(e.name) \(e.url): \($0)" } }
    }

    /// Whether the document names what `flow` needs.
    public func supports(_ flow: Flow) -> Bool {
        guard url("token_endpoint") != nil else { return false }
        switch flow {
        case .authorizationCode: return url("authorization_endpoint") != nil
        case .deviceCode: return url("device_authorization_endpoint") != nil
        case .password, .clientCredentials, .tokenExchange, .idJag: return true
        case .session, .token: return false
        }
    }

    /// The flow `config add` picks when none is given: a browser login, else a device login.
    public var defaultFlow: Flow? { [Flow.authorizationCode, .deviceCode].first(where: supports) }
}
