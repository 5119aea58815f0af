import JSON

/// A named set of requirements a provider opts into with `profile` (one name or a list):
/// what it turns on, and what it refuses, each refusal naming the requirement. A profile is
/// data, declared here once; the configuration check (`apply`), the login and the token
/// endpoint read its fields, so another profile is one more declaration in `all`.
public struct ProviderProfile: Sendable, Equatable {
    public let name: String
    /// The specification, as refusals name it.
    let specification: String
    /// Pushed Authorization Requests for every browser login (RFC 9126).
    let par: Bool
    /// Sender-constrained tokens: DPoP on, and a plain Bearer token from the server refused.
    let senderConstrained: Bool
    /// The server must promise RFC 9207's `iss` (`authorization_response_iss_parameter_supported`).
    let requiresIss: Bool
    /// The client must authenticate with one of these `clientAuth` methods (nil: any, or none).
    let clientAuthMethods: [ClientAuthConfig.Method]?
    /// The client assertion's `aud` is the issuer rather than the endpoint.
    let assertionAudienceIsIssuer: Bool
    /// The flows the profile allows (nil: any).
    let flows: [Flow]?

    /// FAPI 2.0 Security Profile (OpenID Foundation, final 2025): PAR, PKCE S256 (always on here),
    /// sender-constrained tokens (DPoP; mTLS is not offered), `private_key_jwt`, RFC 9207 `iss`,
    /// the authorization code response type only, and the issuer as the assertion's audience.
    static let fapi2 = ProviderProfile(name: "fapi2", specification: "FAPI 2.0", par: true, senderConstrained: true, requiresIss: true,
                                       clientAuthMethods: [.privateKeyJWT], assertionAudienceIsIssuer: true,
                                       flows: [.authorizationCode, .clientCredentials])

    static let all = [fapi2]

    /// Reads `profile` (a name or a list of names) and holds the provider to each profile: turns on
    /// what it requires and refuses what it forbids, naming the requirement.
    static func apply(_ r: ConfigReader, to p: inout ProviderConfig) throws(ConfigError) {
        guard let value = r.object["profile"] else { return }
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
            try profile.hold(&p, r)
            p.profiles.append(profile)
        }
    }

    private func refusal(_ r: ConfigReader, _ key: String?, _ requirement: String) -> ConfigError {
        r.error(key, "\(specification) (profile \"\(name)\") \(requirement)")
    }

    private func hold(_ p: inout ProviderConfig, _ r: ConfigReader) throws(ConfigError) {
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
