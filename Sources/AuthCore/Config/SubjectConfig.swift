import JSON

/// What a derived flow (`tokenExchange`, `idJag`) makes its tokens of: the session of another configured
/// provider (`from`), the token of it presented, and what the exchange asks for. The provider has no
/// login of its own: its token is obtained when asked for, and it is logged out with `from`.
public struct SubjectConfig: Sendable, Equatable {
    /// The provider whose session is the subject.
    public var from: String
    public var tokenType: SubjectTokenType
    /// RFC 8693 `audience` and `resource` (for `idJag`, `audience` is the authorization server's issuer).
    public var audience: String?
    public var resource: String?
    /// RFC 8693 `requested_token_type`, as a URN; nil: the server's default (an access token).
    public var requestedTokenType: String?
    /// A provider whose access token is sent as the `actor_token` (RFC 8693 §4.1 `act`, the delegation case).
    public var actor: String?

    static let keys = ["from", "subjectTokenType", "audience", "resource", "requestedTokenType", "actor"]

    /// The `subject*` keys of a provider with a derived flow; nil for other flows.
    static func parse(_ r: ConfigReader, flow: Flow) throws(ConfigError) -> SubjectConfig? {
        guard flow == .tokenExchange || flow == .idJag else { return nil }
        let from = try r.requiredString("from")
        var subject = SubjectConfig(from: from, tokenType: .idToken)
        if flow == .tokenExchange {
            let name = try r.requiredString("subjectTokenType")
            guard let type = SubjectTokenType(rawValue: name) else {
                throw r.error("subjectTokenType", "expected one of \(SubjectTokenType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            subject.tokenType = type
            subject.audience = try r.string("audience")
            if let requested = try r.string("requestedTokenType") {
                // A short name is RFC 8693 §3's URI of that name; a URI is sent as it is.
                if (SubjectTokenType.allCases.map(\.rawValue) + ["jwt"]).contains(requested) {
                    subject.requestedTokenType = "urn:ietf:params:oauth:token-type:" + requested
                } else if requested.contains(":") {
                    subject.requestedTokenType = requested
                } else {
                    throw r.error("requestedTokenType", "expected access_token, id_token, refresh_token, jwt or a token type URI (RFC 8693 §3)")
                }
            }
            subject.actor = try r.string("actor")
        }
        if let resource = try r.string("resource") {
            if let problem = ProviderConfig.resourceProblem(resource) { throw r.error("resource", problem) }
            subject.resource = resource
        }
        return subject
    }

    /// The cross-provider rules, once every provider is read: `from` (and `actor`) name another configured provider
    /// with a login of its own, and what the derived provider does not configure is `from`'s — a `tokenExchange`
    /// exchanges at `from`'s server as `from`'s client, an `idJag` is `from`'s client at the API's server too.
    static func resolve(_ providers: inout [ProviderConfig], file: String) throws(ConfigError) {
        let byID = Dictionary(providers.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for index in providers.indices {
            guard let subject = providers[index].subject else { continue }
            let path = "$.providers[\(index)]"
            for (key, name) in [("from", subject.from), ("actor", subject.actor)] {
                guard let name else { continue }
                guard name != providers[index].id else { throw ConfigError(file: file, path: "\(path).\(key)", problem: "a provider cannot be its own \(key)") }
                guard let other = byID[name] else { throw ConfigError(file: file, path: "\(path).\(key)", problem: "no provider \"\(name)\" is configured") }
                guard other.subject == nil else {
                    throw ConfigError(file: file, path: "\(path).\(key)", problem: "provider \"\(name)\" has no login of its own (flow \(other.flow.rawValue)); name the provider it comes from")
                }
            }
            guard let from = byID[subject.from] else { continue }
            var p = providers[index]
            if p.clientId == nil {
                (p.clientId, p.clientSecret, p.clientAuth) = (from.clientId, from.clientSecret, from.clientAuth)
            }
            if p.flow == .tokenExchange, p.issuer == nil, p.tokenEndpoint == nil {
                (p.issuer, p.tokenEndpoint, p.revocationEndpoint) = (from.issuer, from.tokenEndpoint, from.revocationEndpoint)
            }
            providers[index] = p
        }
    }
}

/// The token of the subject's session an exchange presents (RFC 8693 §3), by its configuration name.
public enum SubjectTokenType: String, Sendable, CaseIterable {
    case accessToken = "access_token"
    case idToken = "id_token"
    case refreshToken = "refresh_token"

    public var urn: String { "urn:ietf:params:oauth:token-type:\(rawValue)" }
}
