import JSON

/// The endpoints an issuer's discovery document names, for `config add`: shown to the person
/// adding the provider and checked before anything is written, so a typo in the issuer or a
/// server that lacks the flow is found now rather than at the first login.
public struct IssuerEndpoints: Sendable, Equatable {
    /// Metadata names (RFC 8414) and their URLs, in the order they are shown; absent ones left out.
    public let endpoints: [(name: String, url: String)]

    static let names = ["authorization_endpoint", "device_authorization_endpoint", "token_endpoint", "revocation_endpoint", "userinfo_endpoint"]

    /// The flows of the identity provider's profile (`ProviderProfile.defaultFlows`), which `config add`
    /// leaves to the profile when none is given; nil without a provider profile.
    public let profileFlows: [Flow]?

    init(_ metadata: JSONObject, profile: ProviderProfile? = nil) {
        endpoints = Self.names.compactMap { name in metadata[name]?.stringValue.map { (name, $0) } }
        profileFlows = profile?.defaultFlows
    }

    public static func == (a: IssuerEndpoints, b: IssuerEndpoints) -> Bool {
        a.endpoints.map(\.name) == b.endpoints.map(\.name) && a.endpoints.map(\.url) == b.endpoints.map(\.url)
    }

    /// Reads the issuer's metadata through the one `Discovery` (its candidate order and rules), as the agent will at login.
    /// With `profiles` (`--profile`), or an issuer a provider profile recognises, where that profile
    /// says: its fixed endpoints for a provider without discovery (GitHub; then `issuer` may be empty).
    public static func discover(issuer: String, profiles: [String] = [], transport: HTTPTransport) async throws(AuthError) -> IssuerEndpoints {
        let profile = ProviderProfile.providers.first { profiles.contains($0.name) } ?? ProviderProfile.recognised(issuer)
        if let profile, profile.discovery == .none {
            let fixed = Self.names.compactMap { name in profile.endpoints[Self.configKey(name)].map { (name, JSONValue.string($0)) } }
            var metadata = JSONObject()
            for (name, url) in fixed { metadata[name] = url }
            return IssuerEndpoints(metadata, profile: profile)
        }
        if let problem = ProviderConfig.endpointProblem(issuer) { throw AuthError.issuerUnusable(issuer, problem) }
        let discovery = Discovery(http: HTTPCalls(transport: transport, timeout: 10))
        return IssuerEndpoints(try await discovery.metadata(issuer: issuer, place: profile?.discovery ?? .anywhere, templates: profile?.issuers ?? []),
                               profile: profile)
    }

    /// `token_endpoint` → `tokenEndpoint`: a metadata name as the configuration calls it.
    static func configKey(_ name: String) -> String {
        let parts = name.split(separator: "_")
        return parts.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
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
