/// A client registered by hand at an authorization server the agent may learn about
/// (config `clients`): used instead of registering one.
public struct ConfiguredClient: Sendable, Equatable {
    public var issuer: String
    public var clientId: String
    public var clientSecret: String?
    public var redirectPort: Int?
    /// Whether APIs learned with this server get DPoP-bound tokens (when its metadata lists ES256):
    /// overrides `learn.dpop` for this server; nil leaves it to `learn.dpop`.
    public var dpop: Bool?

    public init(issuer: String, clientId: String, clientSecret: String? = nil, redirectPort: Int? = nil, dpop: Bool? = nil) {
        self.issuer = issuer
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.redirectPort = redirectPort
        self.dpop = dpop
    }

    static let keys = ["issuer", "clientId", "clientSecret", "redirectPort", "dpop"]

    static func parse(_ r: ConfigReader) throws(ConfigError) -> ConfiguredClient {
        try r.rejectUnknownKeys(keys)
        let issuer = try r.requiredString("issuer")
        guard Origin(url: issuer)?.isSecureForBearer == true else {
            throw r.error("issuer", "an issuer must be an https URL (plain http on loopback only)")
        }
        return ConfiguredClient(issuer: issuer, clientId: try r.requiredString("clientId"), clientSecret: try r.string("clientSecret"),
                                redirectPort: try r.int("redirectPort", in: 1...65535), dpop: try r.bool("dpop"))
    }
}

/// `learn.allow`: origins (`https://api.example.com`, `https://*.example.com`) where `fetch`
/// learns an API from its 401 without being asked to.
public struct LearnAllowList: Sendable, Equatable {
    public var patterns: [String] = []

    public init(_ patterns: [String] = []) { self.patterns = patterns }

    /// Whether `url`'s origin matches a pattern: scheme and port exactly, the host exactly or,
    /// after `*.`, any host ending in `.` and the rest.
    public func allows(_ url: String) -> Bool {
        guard let origin = Origin(url: url) else { return false }
        return patterns.contains { (pattern: String) -> Bool in
            let (concrete, wildcard) = Self.unwildcarded(pattern)
            guard let p = Origin(url: concrete), p.scheme == origin.scheme, p.port == origin.port else { return false }
            return wildcard ? origin.host.hasSuffix("." + p.host) : origin.host == p.host
        }
    }

    /// The pattern without its `*.`, and whether it had one.
    static func unwildcarded(_ pattern: String) -> (String, Bool) {
        guard let star = pattern.firstRange(of: "://*.") else { return (pattern, false) }
        var text = pattern
        text.replaceSubrange(star, with: "://")
        return (text, true)
    }

    /// The keys of `learn`: `allow` (this list), `dpop` (`AgentConfig.learnDPoP`), `enterpriseIdP`
    /// (`AgentConfig.learnEnterpriseIdP`) and `redirectPort` (`AgentConfig.learnRedirectPort`).
    static let learnKeys = ["allow", "dpop", "enterpriseIdP", "redirectPort"]

    static func parse(_ r: ConfigReader) throws(ConfigError) -> LearnAllowList {
        try r.rejectUnknownKeys(learnKeys)
        var list = LearnAllowList()
        for (index, item) in (try r.array("allow") ?? []).enumerated() {
            guard let text = item.stringValue,
                  let origin = Origin(url: unwildcarded(text).0), origin.isSecureForBearer else {
                throw ConfigError(file: r.file, path: "\(r.path("allow"))[\(index)]", problem: "an origin such as \"https://api.example.com\" or \"https://*.example.com\" (plain http on loopback only)")
            }
            list.patterns.append(text)
        }
        return list
    }
}
