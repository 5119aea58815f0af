import JSON

/// A named declaration a provider opts into with `profile` (one name or a list), or that its
/// issuer's host picks: either a specification's requirements (`fapi2`: what it turns on, what it
/// refuses, each refusal naming the requirement) or an identity provider's documented habits
/// (`entra`, `google`, `github`, …: where its metadata is, how it wants a resource asked for, what
/// a refresh token takes). A profile is data, declared once (`all`, the providers in
/// `ProviderProfiles.swift`); the configuration check (`apply`), discovery, the login and the token
/// endpoint read its fields, so another profile is one more declaration. Where a provider's
/// profile and its configuration disagree, the configuration wins: a profile only fills gaps.
public struct ProviderProfile: Sendable, Equatable {
    public let name: String
    /// The specification or provider, as refusals name it.
    let specification: String
    /// Pushed Authorization Requests for every browser login (RFC 9126).
    var par = false
    /// Sender-constrained tokens: DPoP on, and a plain Bearer token from the server refused.
    var senderConstrained = false
    /// The server must promise RFC 9207's `iss` (`authorization_response_iss_parameter_supported`).
    var requiresIss = false
    /// The client must authenticate with one of these `clientAuth` methods (nil: any, or none).
    var clientAuthMethods: [ClientAuthConfig.Method]?
    /// The client assertion's `aud` is the issuer rather than the endpoint.
    var assertionAudienceIsIssuer = false
    /// The flows the profile allows (nil: any).
    var flows: [Flow]?

    // MARK: An identity provider's habits

    /// Issuer templates, `{name}` standing for one host label or path segment: a configured issuer
    /// matching one picks the profile without `profile`, and a metadata document may name the
    /// template itself as its issuer (Entra's multi-tenant `…/{tenantid}/v2.0`).
    var issuers: [String] = []
    /// Where the server's metadata is (`Discovery.Place`).
    var discovery = Discovery.Place.anywhere
    /// Endpoints the provider has at fixed addresses (configuration key → URL), for servers without discovery.
    var endpoints: [String: String] = [:]
    /// How a token for another resource or audience is asked for.
    var resourceParameter = ResourceParameter.resource
    /// What a login must ask for to get a refresh token.
    var refreshTokens = RefreshTokenRequest.given
    /// The flows whose client must send its secret even as a public (desktop) client using PKCE.
    var secretRequired: [Flow] = []
    /// What a sub-code of a refusal (in its `error_description` or `error_subtype`) means, in words for a person.
    var refusalMeanings: [String: String] = [:]
    /// The flows when the configuration names none, the first the default.
    var defaultFlows: [Flow]?
    /// The scopes when the configuration lists none.
    var defaultScopes: [String] = []
    /// The user name `git-credential` sends beside the token, when the configuration names none.
    var gitUsername: String?
    /// Whether the server lets clients register themselves (RFC 7591); false: a `clientId` is required.
    var registers = true
    /// Where a person registers a client (`setup` says so when asking for the client id).
    var registrationPage: String?

    /// How a provider wants to be asked for a token meant for another API.
    enum ResourceParameter: String, Sendable, Equatable {
        /// RFC 8707's `resource`.
        case resource
        /// `audience`, which also takes a `resource` (Auth0: the audience wins over the resource).
        case audience
        /// A scope `{resource}/.default` (Entra: `resource` is refused with AADSTS9010010).
        case defaultScope
        /// Fixed per authorization server (Okta's `/oauth2/{id}`): another audience is another provider.
        case authorizationServer
        /// Not at all (GitHub): a token carries what the app was granted, and a refresh takes no
        /// `scope`, so a token of other scopes, audiences or resources cannot be asked for.
        case granted
    }

    /// What a login adds so that the server issues a refresh token.
    enum RefreshTokenRequest: String, Sendable, Equatable {
        case given
        /// The `offline_access` scope.
        case offlineAccess
        /// `access_type=offline` and `prompt=consent` on the authorization request (Google).
        case offlineConsent
    }

    /// FAPI 2.0 Security Profile (OpenID Foundation, final 2025): PAR, PKCE S256 (always on here),
    /// sender-constrained tokens (DPoP; mTLS is not offered), `private_key_jwt`, RFC 9207 `iss`,
    /// the authorization code response type only, and the issuer as the assertion's audience.
    static let fapi2 = ProviderProfile(name: "fapi2", specification: "FAPI 2.0", par: true, senderConstrained: true, requiresIss: true,
                                       clientAuthMethods: [.privateKeyJWT], assertionAudienceIsIssuer: true,
                                       flows: [.authorizationCode, .clientCredentials])

    static let all = [fapi2] + providers

    /// Reads `profile` (a name or a list of names) and holds the provider to each profile: fills
    /// in what it declares and the configuration leaves out, turns on what it requires and refuses
    /// what it forbids, naming the requirement. Without `profile`, the issuer may pick an identity
    /// provider's (`recognised`). Runs before `flow` is read, as a profile may give it.
    static func apply(_ r: ConfigReader) throws(ConfigError) -> [ProviderProfile] {
        // Most providers name no profile and no issuer a profile could recognise: nothing to instantiate at start-up.
        if r.object["profile"] == nil && r.object["issuer"] == nil { return [] }
        var named: [ProviderProfile] = []
        if let value = r.object["profile"] {
            let names: [(value: String, path: String)]
            if let name = value.stringValue {
                names = [(name, r.path("profile"))]
            } else if let list = try r.strings("profile") {
                names = list
            } else {
                throw r.error("profile", "expected a profile's name or a list of them")
            }
            for (name, path) in names {
                guard let profile = all.first(where: { $0.name == name }) else {
                    let known = all.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    throw ConfigError(file: r.file, path: path, problem: "unknown profile \(JSONSerializer.string(.string(name))); expected one of \(known)")
                }
                named.append(profile)
            }
        }
        let providers = named.filter(\.isProvider)
        if providers.count > 1 { throw r.error("profile", "names two identity providers (\(providers.map(\.name).joined(separator: ", "))); a provider is one of them") }
        // Recognised only where `profile` is absent: naming profiles names them all, and `"profile": []` none.
        if r.object["profile"] == nil, let issuer = r.object["issuer"]?.stringValue, let profile = recognised(issuer) { named.insert(profile, at: 0) }
        return named
    }

    /// Whether this describes an identity provider (rather than a specification's requirements).
    var isProvider: Bool { !issuers.isEmpty || !endpoints.isEmpty }

    /// The identity provider whose issuer template `issuer` matches.
    static func recognised(_ issuer: String) -> ProviderProfile? {
        providers.first { $0.issuers.contains { Self.matches(issuer, template: $0) } }
    }

    /// Whether `text` is `template` with each `{name}` replaced by one or more characters other
    /// than `/` (a trailing `/` on either side ignored).
    static func matches(_ text: String, template: String) -> Bool {
        func trimmed(_ s: String) -> Substring { s.hasSuffix("/") ? s.dropLast() : Substring(s) }
        var rest = trimmed(text)[...]
        var pattern = trimmed(template)[...]
        while !pattern.isEmpty {
            if pattern.first == "{", let close = pattern.firstIndex(of: "}") {
                pattern = pattern[pattern.index(after: close)...]
                let stop = pattern.first
                let taken = rest.prefix { $0 != "/" && $0 != stop }
                guard !taken.isEmpty else { return false }
                rest = rest.dropFirst(taken.count)
            } else {
                guard rest.first == pattern.first else { return false }
                rest = rest.dropFirst()
                pattern = pattern.dropFirst()
            }
        }
        return rest.isEmpty
    }

    /// Fills the gaps the configuration left with what the profile declares, before the requirements are checked.
    func fill(_ p: inout ProviderConfig, _ r: ConfigReader) throws(ConfigError) {
        for (key, url) in endpoints where !r.has(key) { p.setEndpoint(key, url) }
        if !r.has("scopes") { p.scopes = defaultScopes }
        if refreshTokens == .offlineAccess, p.flows.contains(where: \.descriptor.sharesAccounts), !p.scopes.contains("offline_access") {
            p.scopes.append("offline_access")
        }
        if p.gitUsername == nil { p.gitUsername = gitUsername }
        if p.clientSecret == nil, p.clientAuth == nil, let flow = p.flows.first(where: { secretRequired.contains($0) && p.flowClients[$0]?.clientSecret == nil }) {
            throw refusal(r, nil, "requires the client's secret for flow \"\(flow.rawValue)\", even with PKCE from a desktop client: add \"clientSecret\"")
        }
        if !registers, !r.has("clientId"), p.flowClients.isEmpty {
            throw refusal(r, nil, "has no dynamic client registration: register an app and add its \"clientId\"")
        }
        if resourceParameter == .authorizationServer, let (origin, _) = p.originShapes.first(where: { $0.value.audience != nil || $0.value.resource != nil }) {
            throw refusal(r, "origins", "sets the audience per authorization server (/oauth2/{id}): the origin \(origin) needs a provider of its own with that server's issuer, not a resource or audience")
        }
    }

    func refusal(_ r: ConfigReader, _ key: String?, _ requirement: String) -> ConfigError {
        r.error(key, "\(specification) (profile \"\(name)\") \(requirement)")
    }

    func hold(_ p: inout ProviderConfig, _ r: ConfigReader) throws(ConfigError) {
        if let flows, let odd = p.flows.first(where: { !flows.contains($0) }) {
            throw refusal(r, "flow", "allows only the authorization code response type (and client credentials): flow \"\(odd.rawValue)\" is not allowed")
        }
        if let methods = clientAuthMethods {
            let names = methods.map(\.rawValue).joined(separator: " or ")
            guard let auth = p.clientAuth else {
                throw refusal(r, nil, p.clientSecret != nil
                    ? "forbids client_secret_basic: authenticate with \(names) (\"clientAuth\": {\"method\": \"\(methods[0].rawValue)\", \"key\": …})"
                    : "requires a confidential client authenticating with \(names) (\"clientAuth\")")
            }
            guard methods.contains(auth.method) else {
                throw refusal(r, "clientAuth", "requires client authentication by \(names), not \(auth.method.rawValue)")
            }
        }
        if senderConstrained {
            if r.object["dpop"]?.boolValue == false { throw refusal(r, "dpop", "requires sender-constrained tokens: \"dpop\" cannot be false") }
            p.dpop = true
        }
        if par {
            if r.object["par"]?.boolValue == false { throw refusal(r, "par", "requires pushed authorization requests: \"par\" cannot be false") }
            p.par = true
        }
        if (requiresIss || assertionAudienceIsIssuer), p.issuer == nil {
            throw refusal(r, nil, "needs the server's \"issuer\": its authorization responses' iss is checked (RFC 9207) and it is the client assertion's audience")
        }
    }
}
