import JSON

/// What a provider's identity-provider profile (`ProviderProfile`) changes once the configuration is
/// read: the one place discovery, the login and the token endpoint ask.
extension ProviderConfig {
    /// The identity provider's profile, named or recognised from the issuer; nil for any other server.
    var providerProfile: ProviderProfile? { profiles.first(where: \.isProvider) }

    /// Whether the endpoints not configured are looked up from `issuer` (not for GitHub, which has no discovery).
    var discovers: Bool { providerProfile?.discovery != Discovery.Place.none }

    /// The metadata of the provider's issuer, where its profile says it is.
    func metadata(_ discovery: Discovery, issuer: String) async throws(AuthError) -> JSONObject {
        try await discovery.metadata(issuer: issuer, place: providerProfile?.discovery ?? .anywhere, templates: providerProfile?.issuers ?? [])
    }

    /// The token request's parameters for `shape`, as the provider wants a resource asked for:
    /// RFC 8707's `resource`; Auth0's `audience` (which wins over a `resource`); Entra's scope
    /// `{resource}/.default`, one resource per request.
    func formPairs(_ shape: TokenShape) -> [(String, String)] {
        switch providerProfile?.resourceParameter ?? .resource {
        case .resource, .authorizationServer, .granted:
            return shape.formPairs
        case .audience:
            guard let resource = shape.resource else { return shape.formPairs }
            return TokenShape(scopes: shape.scopes, audience: shape.audience ?? resource).formPairs
        case .defaultScope:
            guard let resource = shape.resource ?? shape.audience else { return shape.formPairs }
            return TokenShape(scopes: shape.scopes + [Self.defaultScope(resource)]).formPairs
        }
    }

    /// Why the provider cannot be asked for `shape` at all, nil when it can: an Okta authorization server
    /// has one audience, so a token for another resource or audience is refused here, before any request;
    /// GitHub's tokens carry what the app was granted (a refresh there would spend a rotating refresh
    /// token for a token that only looks shaped).
    func shapeRefusal(_ shape: TokenShape) -> ServerRefusal? {
        guard let profile = providerProfile, !shape.isNone else { return nil }
        switch profile.resourceParameter {
        case .authorizationServer where shape.resource != nil || shape.audience != nil:
            return ServerRefusal(error: "invalid_target", description: "\(profile.specification) sets the audience per authorization server: another API is another provider with that server's issuer")
        case .granted:
            return ServerRefusal(error: "invalid_scope", description: "\(profile.specification)'s tokens carry what the app was granted: change the app's scopes or permissions instead")
        default:
            return nil
        }
    }

    /// Entra's scope for all of a resource's permissions the app was granted: `{resource}/.default`.
    static func defaultScope(_ resource: String) -> String {
        (resource.hasSuffix("/") ? String(resource.dropLast()) : resource) + "/.default"
    }

    /// What the authorization request adds so that the server issues a refresh token (Google's
    /// `access_type=offline`, and `prompt=consent`, without which a second login gets none).
    var authorizationExtras: [(String, String)] {
        providerProfile?.refreshTokens == .offlineConsent ? [("access_type", "offline"), ("prompt", "consent")] : []
    }

    /// The refusal in words a person can act on, where the profile knows what its sub-code means
    /// (Google's `invalid_rapt`): the meaning first, the server's words after.
    func explained(_ result: TokenEndpointResult) -> TokenEndpointResult {
        guard case .rejected(let error, let description) = result, let meanings = providerProfile?.refusalMeanings,
              let (code, meaning) = meanings.first(where: { (description ?? "").contains($0.key) || error == $0.key }) else { return result }
        return .rejected(error: error, description: "\(meaning) (\(description ?? code))")
    }

    /// Whether `key` is configured, or given by the profile (an endpoint it fixes).
    func has(_ key: String, _ r: ConfigReader) -> Bool { r.has(key) || (providerProfile?.endpoints[key] != nil) }

    /// Sets the endpoint the configuration key `key` names.
    mutating func setEndpoint(_ key: String, _ url: String) {
        switch key {
        case "authorizationEndpoint": authorizationEndpoint = url
        case "tokenEndpoint": tokenEndpoint = url
        case "deviceAuthorizationEndpoint": deviceAuthorizationEndpoint = url
        case "userinfoEndpoint": userinfoEndpoint = url
        case "revocationEndpoint": revocationEndpoint = url
        default: assertionFailure("not an endpoint a profile sets: \(key)")
        }
    }
}
