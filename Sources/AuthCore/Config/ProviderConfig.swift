import JSON

/// One configured provider: what it is called, which origins its tokens may be
/// sent to, and the endpoints and client details its flow needs.
///
/// Values here are already validated (see `AgentConfig.parse`): endpoints are
/// absolute http(s) URLs, plain http only on loopback, origins bare and never
/// plain http off loopback. Endpoints stay `String` because they are only ever
/// handed to an `HTTPTransport`. The description never shows `clientSecret` or
/// `loginBody`.
public struct ProviderConfig: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var id: String
    public var displayName: String
    /// The ways to log in, never empty; the first is the default (`flow`). Several only
    /// when every one `sharesAccounts`: the accounts are the provider's, whichever flow logged them in.
    public var flows: [Flow]
    /// The default flow: the one `login` uses when it names none.
    public var flow: Flow { flows[0] }
    /// The OAuth clients of flows listed as `{"flow", "clientId", "clientSecret"?}`, for
    /// servers that allow one grant per client (django-oauth-toolkit): such a flow logs in,
    /// and renews and revokes the sessions it logged in, as its own client.
    public var flowClients: [Flow: FlowClient] = [:]
    /// Where this provider's token may be attached; compared exactly by `OriginMatcher`.
    public var origins: [Origin]
    /// The token shape of origins configured as `{origin, scopes?, audience?, resource?}`.
    public var originShapes: [Origin: TokenShape] = [:]

    // session flow
    public var loginEndpoint: String?
    /// Template posted to `loginEndpoint`; `{{username}}` and `{{password}}` are filled in.
    public var loginBody: JSONValue?
    /// Where the login response keeps the token.
    public var tokenPointer: JSONPointer?
    /// Where the login response keeps the user, if anywhere.
    public var userPointer: JSONPointer?
    public var refreshEndpoint: String?
    public var logoutEndpoint: String?

    // OAuth flows
    public var tokenEndpoint: String?
    public var revocationEndpoint: String?
    public var userinfoEndpoint: String?
    public var clientId: String?
    public var clientSecret: String?
    public var scopes: [String]
    /// OpenID Connect issuer, for discovering endpoints not given explicitly.
    public var issuer: String?
    public var authorizationEndpoint: String?
    public var deviceAuthorizationEndpoint: String?
    /// Fixed loopback port for the authorization code redirect; `nil` picks a free one.
    public var redirectPort: Int?
    /// Whether to open the user's browser for device and authorization code flows.
    public var openBrowser: Bool
    /// The username `auth-agent git-credential` sends beside the token; nil means `oauth2`.
    public var gitUsername: String?
    /// Set for a provider the agent learned from an API's 401 (`Learning/`), nil for a configured one.
    public var learned: LearnedResource?
    /// RFC 9449: bind the tokens to a key made at login, and prove it on every request (OAuth flows).
    public var dpop = false
    /// RFC 9126: browser logins push their parameters first (`par`, a profile, or the server's
    /// or registration's requirement — `AuthorizationCodeProvider.usesPAR` decides).
    public var par = false
    public var pushedAuthorizationRequestEndpoint: String?
    /// Signed client authentication (RFC 7523 §2.2) instead of the secret in a header; nil: `client_secret_basic`
    /// with a `clientSecret`, else `client_id` in the body.
    public var clientAuth: ClientAuthConfig?
    /// The profiles the provider is held to (`profile`), each already applied by `parse`.
    public var profiles: [ProviderProfile] = []
    /// For a derived flow (`tokenExchange`, `idJag`): the provider whose session its tokens are made of, and how.
    public var subject: SubjectConfig?

    public init(id: String, displayName: String? = nil, flow: Flow, origins: [Origin] = [],
                loginEndpoint: String? = nil, loginBody: JSONValue? = nil, tokenPointer: JSONPointer? = nil,
                userPointer: JSONPointer? = nil, refreshEndpoint: String? = nil, logoutEndpoint: String? = nil,
                tokenEndpoint: String? = nil, revocationEndpoint: String? = nil, userinfoEndpoint: String? = nil,
                clientId: String? = nil, clientSecret: String? = nil, scopes: [String] = [], issuer: String? = nil,
                authorizationEndpoint: String? = nil, deviceAuthorizationEndpoint: String? = nil,
                redirectPort: Int? = nil, openBrowser: Bool = false) {
        self.id = id
        self.displayName = displayName ?? id
        self.flows = [flow]
        self.origins = origins
        self.loginEndpoint = loginEndpoint
        self.loginBody = loginBody
        self.tokenPointer = tokenPointer
        self.userPointer = userPointer
        self.refreshEndpoint = refreshEndpoint
        self.logoutEndpoint = logoutEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.revocationEndpoint = revocationEndpoint
        self.userinfoEndpoint = userinfoEndpoint
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.deviceAuthorizationEndpoint = deviceAuthorizationEndpoint
        self.redirectPort = redirectPort
        self.openBrowser = openBrowser
    }

    // MARK: Keys

    static let commonKeys = ["id", "displayName", "flow", "origins", "gitUsername"]

    /// The keys a provider object may have with a given flow.
    static func keys(for flow: Flow) -> [String] { keys(for: [flow]) }

    /// The keys a provider object may have with these flows: what any of them uses.
    static func keys(for flows: [Flow]) -> [String] {
        var all = commonKeys
        for flow in flows {
            for key in flow.descriptor.keys where !all.contains(key) { all.append(key) }
        }
        return all
    }

    /// Who issues this provider's sessions, recorded in each at login (`Session.issuer`): a learned
    /// API's server, else the configured `issuer`, else the token endpoint (or a session API's
    /// login endpoint); nil for a pasted token, which no server of the agent's issued.
    var sessionIssuer: String? { learned?.issuer ?? issuer ?? tokenEndpoint ?? loginEndpoint }

    /// The `aud` of this client's assertions sent to `endpoint`: the endpoint (what most servers,
    /// Glewlwyd among them, accept), or the issuer where a profile asks for it (FAPI 2.0).
    func assertionAudience(endpoint: String) -> String {
        guard profiles.contains(where: \.assertionAudienceIsIssuer), let issuer = learned?.issuer ?? issuer else { return endpoint }
        return issuer
    }

    /// `deviceCode, password`: the flows, for messages.
    public var flowNames: String { flows.map(\.rawValue).joined(separator: ", ") }

    /// Every key any provider may have; what the JSON schema must list.
    static var knownKeys: [String] {
        var all: [String] = []
        for flow in Flow.allCases {
            for key in keys(for: flow) where !all.contains(key) { all.append(key) }
        }
        return all
    }

    static let endpointKeys = ["loginEndpoint", "refreshEndpoint", "logoutEndpoint", "tokenEndpoint", "revocationEndpoint",
                               "userinfoEndpoint", "issuer", "authorizationEndpoint", "deviceAuthorizationEndpoint",
                               "pushedAuthorizationRequestEndpoint"]

    // MARK: Parsing

    /// Reads and validates one element of `providers`; cross-provider checks
    /// (unique ids and origins) are `AgentConfig`'s.
    /// The token shape `sign` and `fetch` use for a request to `origin`.
    func shape(for origin: Origin) -> TokenShape { originShapes.isEmpty ? .none : originShapes[origin] ?? .none }

    /// RFC 8707: a resource is an absolute URI without a fragment.
    static func resourceProblem(_ resource: String) -> String? {
        guard let colon = resource.firstIndex(of: ":"), colon != resource.startIndex,
              resource[..<colon].allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else {
            return "a resource must be an absolute URI (RFC 8707)"
        }
        return resource.contains("#") ? "a resource must not have a fragment (RFC 8707)" : nil
    }

    /// Why `id` cannot name a provider, nil when it can; what `setup` checks an answer with, too.
    public static func idProblem(_ id: String) -> String? {
        !id.isEmpty && id.utf8.count <= 64 && id.utf8.allSatisfy(isIDByte) ? nil : "a provider id must match [a-z0-9._-]+ (at most 64 characters)"
    }

    static func parse(_ r: ConfigReader) throws(ConfigError) -> ProviderConfig {
        // `knownKeys` asks every flow's descriptor: only worth it when a key is not a common one.
        if r.object.keys.contains(where: { !commonKeys.contains($0) }) { try r.rejectUnknownKeys(knownKeys) }
        let id = try r.requiredString("id")
        if let problem = idProblem(id) { throw r.error("id", problem) }
        let profiles = try ProviderProfile.apply(r)
        // No lazy chain over the profiles: its generic types were instantiated at every start, profiles or not.
        let (flows, clients) = try parseFlows(r, defaults: profiles.isEmpty ? nil : profiles.first { $0.defaultFlows != nil }?.defaultFlows)
        let allowed = keys(for: flows)
        for key in r.object.keys where !allowed.contains(key) {
            let names = flows.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw r.error(key, "\"\(key)\" is not used by flow\(flows.count > 1 ? "s" : "") \(names)")
        }
        var p = ProviderConfig(id: id, displayName: try r.string("displayName"), flow: flows[0])
        p.flows = flows
        p.flowClients = clients

        guard let origins = try r.array("origins") else { throw r.error(nil, "missing required key \"origins\"") }
        guard !origins.isEmpty else { throw r.error("origins", "list at least one origin the token may be sent to") }
        for (index, item) in origins.enumerated() {
            let path = "\(r.path("origins"))[\(index)]"
            if item.objectValue != nil {
                let entry = try ConfigReader(item, path: path, file: r.file)
                try entry.rejectUnknownKeys(["origin", "scopes", "audience", "resource"])
                let o = try origin(try entry.requiredString("origin"), path: entry.path("origin"), file: r.file)
                let scopes = try entry.strings("scopes")?.map(\.value) ?? []
                if let resource = try entry.string("resource"), let problem = resourceProblem(resource) { throw entry.error("resource", problem) }
                let shape = TokenShape(scopes: scopes, audience: try entry.string("audience"), resource: try entry.string("resource"))
                p.origins.append(o)
                if !shape.isNone { p.originShapes[o] = shape }
                continue
            }
            guard let text = item.stringValue, !text.isEmpty else {
                throw ConfigError(file: r.file, path: path, problem: item.stringValue == nil
                    ? "expected a string, got \(item.kindName) (an origin, or an object {origin, scopes?, audience?, resource?})" : "must not be empty")
            }
            p.origins.append(try origin(text, path: path, file: r.file))
        }

        var endpoints: [String: String] = [:]
        for key in endpointKeys {
            guard let url = try r.string(key) else { continue }
            if let problem = endpointProblem(url) { throw r.error(key, problem) }
            endpoints[key] = url
        }
        p.loginEndpoint = endpoints["loginEndpoint"]
        p.refreshEndpoint = endpoints["refreshEndpoint"]
        p.logoutEndpoint = endpoints["logoutEndpoint"]
        p.tokenEndpoint = endpoints["tokenEndpoint"]
        p.revocationEndpoint = endpoints["revocationEndpoint"]
        p.userinfoEndpoint = endpoints["userinfoEndpoint"]
        p.issuer = endpoints["issuer"]
        p.authorizationEndpoint = endpoints["authorizationEndpoint"]
        p.deviceAuthorizationEndpoint = endpoints["deviceAuthorizationEndpoint"]
        p.pushedAuthorizationRequestEndpoint = endpoints["pushedAuthorizationRequestEndpoint"]

        if let body = r.object["loginBody"] {
            guard case .object = body else { throw r.error("loginBody", "expected an object, got \(body.kindName)") }
            p.loginBody = body
        }
        p.tokenPointer = try pointer(r, "tokenPointer")
        p.userPointer = try pointer(r, "userPointer")
        p.clientId = try r.string("clientId")
        p.clientSecret = try r.string("clientSecret")
        if let scopes = try r.strings("scopes") {
            for item in scopes where !item.value.unicodeScalars.allSatisfy(isScopeScalar) {
                throw ConfigError(file: r.file, path: item.path,
                                  problem: "a scope is printable ASCII without spaces, quotes or backslashes")
            }
            p.scopes = scopes.map(\.value)
        }
        p.redirectPort = try r.int("redirectPort", in: 1...65535)
        p.openBrowser = try r.bool("openBrowser") ?? false
        p.gitUsername = try r.string("gitUsername")
        p.dpop = try r.bool("dpop") ?? false
        p.par = try r.bool("par") ?? false
        if let auth = try r.child("clientAuth") { p.clientAuth = try ClientAuthConfig.parse(auth, clientSecret: p.clientSecret) }
        if !profiles.isEmpty {
            for profile in profiles {
                try profile.fill(&p, r)
                try profile.hold(&p, r)
            }
            p.profiles = profiles
        }
        p.subject = try SubjectConfig.parse(r, flow: p.flow)

        try checkRequirements(p, r)
        return p
    }

    /// Each flow's required keys; an OAuth flow's endpoints may be discovered from `issuer` instead.
    private static func checkRequirements(_ p: ProviderConfig, _ r: ConfigReader) throws(ConfigError) {
        for name in p.flows {
            let flow = name.descriptor
            // A flow with a client of its own needs no provider-wide one.
            for key in flow.required where !p.has(key, r) && !(key == "clientId" && p.flowClients[name] != nil) {
                throw r.error(nil, "flow \"\(name.rawValue)\" requires \"\(key)\"")
            }
            guard let specific = flow.discoverable, !r.has("issuer") || !p.discovers else { continue }
            let needed = specific + ["tokenEndpoint"]
            guard needed.allSatisfy({ p.has($0, r) }) else {
                let names = needed.map { "\"\($0)\"" }.joined(separator: " and ")
                throw r.error(nil, "flow \"\(name.rawValue)\" requires \(names), or \"issuer\" to discover \(needed.count == 1 ? "it" : "them")")
            }
        }
    }

    /// A bare origin (`scheme://host[:port]`), never plain http off loopback.
    static func origin(_ text: String, path: String, file: String) throws(ConfigError) -> Origin {
        func fail(_ problem: String) -> ConfigError { ConfigError(file: file, path: path, problem: problem) }
        guard let parts = URLAuthority(text) else {
            throw fail("\(JSONSerializer.string(.string(text))) is not a valid origin; expected scheme://host[:port] with scheme http or https")
        }
        guard !parts.hasUserinfo else { throw fail("an origin must not contain a user name or password") }
        guard parts.rest.isEmpty || parts.rest == "/" else { throw fail("an origin has no path, query or fragment") }
        let origin = Origin(scheme: parts.scheme, host: parts.host, port: parts.port)
        guard origin.isSecureForBearer else {
            throw fail("\(origin) uses plain http: a token is never sent over plain http except to loopback")
        }
        return origin
    }

    /// Why `text` is not acceptable as an endpoint, or `nil` when it is.
    static func endpointProblem(_ text: String) -> String? {
        guard let parts = URLAuthority(text) else { return "not a valid http or https URL" }
        if parts.hasUserinfo { return "a URL must not contain a user name or password" }
        if parts.rest.contains("#") { return "an endpoint URL must not have a fragment" }
        let origin = Origin(scheme: parts.scheme, host: parts.host, port: parts.port)
        if !origin.isSecureForBearer {
            return "plain http is only allowed for loopback hosts (127.0.0.1, [::1], localhost); use https"
        }
        return nil
    }

    private static func pointer(_ r: ConfigReader, _ key: String) throws(ConfigError) -> JSONPointer? {
        guard let value = r.object[key] else { return nil }
        guard let text = value.stringValue else { throw r.error(key, "expected a string, got \(value.kindName)") }
        guard let pointer = JSONPointer(text) else { throw r.error(key, "not a valid JSON pointer (RFC 6901), e.g. \"/token\"") }
        return pointer
    }

    private static func isIDByte(_ c: UInt8) -> Bool {
        (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
            || c == UInt8(ascii: "-")
    }

    /// RFC 6749 §3.3 scope-token characters.
    private static func isScopeScalar(_ c: Unicode.Scalar) -> Bool {
        c.value == 0x21 || (0x23...0x5B).contains(c.value) || (0x5D...0x7E).contains(c.value)
    }

    // MARK: Description

    public var description: String {
        "ProviderConfig(id: \(id), flow: \(flows.count == 1 ? flow.rawValue : "[\(flowNames)]"), origins: [\(origins.map(\.description).joined(separator: ", "))])"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "displayName": displayName, "flows": flows, "origins": origins,
                                "clientId": clientId as Any, "hasClientSecret": clientSecret != nil],
               displayStyle: .struct)
    }
}
