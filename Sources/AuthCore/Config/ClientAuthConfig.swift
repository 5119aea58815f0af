import JSON

/// How a confidential client proves itself with a signed JWT instead of sending its secret
/// (RFC 7523 §2.2, OpenID Connect Core §9): `clientAuth: {method, key?, alg?, kid?}`.
///
/// `private_key_jwt` signs with the client's own key — a PEM file (P-256 for ES256, RSA for
/// RS256 and PS256) that only its owner may read, or `"keyring"`: a key `config add --generate-key`
/// made and keeps in the OS keyring (`ClientKeyring`); `client_secret_jwt` signs HS256 with the
/// `clientSecret`. The key's contents are read when the configuration is loaded (`AgentConfig.load`)
/// and at the first assertion, never here, so parsing stays free of file and library access.
public struct ClientAuthConfig: Sendable, Equatable, CustomStringConvertible {
    public enum Method: String, Sendable, CaseIterable {
        case privateKeyJWT = "private_key_jwt"
        case clientSecretJWT = "client_secret_jwt"
    }

    public var method: Method
    /// `private_key_jwt`: the absolute path of the PEM file holding the private key, or `keyring`.
    public var keyPath: String?
    /// The value of `key` that names the keyring rather than a file.
    public static let keyring = "keyring"

    /// Where the key is found: its file, or the keyring's item for `provider`.
    func keySource(provider: String) -> ClientKeys.Source {
        keyPath == Self.keyring ? .keyring(provider: provider) : .file(keyPath ?? "")
    }
    /// The JWS algorithm; nil: the key's (ES256 for P-256, RS256 for RSA), HS256 for `client_secret_jwt`.
    public var alg: String?
    /// The key id the server registered the public key under (the assertion's `kid` header).
    public var kid: String?

    static let keys = ["method", "key", "alg", "kid"]
    static let keyAlgorithms = ["ES256", "RS256", "PS256"]

    public var description: String { "ClientAuthConfig(method: \(method.rawValue), alg: \(alg ?? "default"))" }

    /// Reads `clientAuth` (`r` is that object); `clientSecret` is the provider's, which `client_secret_jwt` needs.
    static func parse(_ r: ConfigReader, clientSecret: String?) throws(ConfigError) -> ClientAuthConfig {
        try r.rejectUnknownKeys(keys)
        let name = try r.requiredString("method")
        guard let method = Method(rawValue: name) else {
            let names = Method.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
            throw r.error("method", "unknown client authentication method \(JSONSerializer.string(.string(name))); expected \(names)")
        }
        var config = ClientAuthConfig(method: method, keyPath: try r.string("key"), alg: try r.string("alg"), kid: try r.string("kid"))
        switch method {
        case .privateKeyJWT:
            guard let path = config.keyPath else { throw r.error(nil, "private_key_jwt requires \"key\": the path of the client's PEM private key") }
            guard path.hasPrefix("/") || path == keyring else { throw r.error("key", "must be an absolute path, or \"keyring\"") }
            if let alg = config.alg, !keyAlgorithms.contains(alg) {
                throw r.error("alg", "private_key_jwt signs with ES256, RS256 or PS256, not \(JSONSerializer.string(.string(alg)))")
            }
        case .clientSecretJWT:
            if config.keyPath != nil { throw r.error("key", "client_secret_jwt signs with the clientSecret; \"key\" is for private_key_jwt") }
            guard clientSecret != nil else { throw r.error(nil, "client_secret_jwt requires the provider's \"clientSecret\"") }
            if let alg = config.alg, alg != "HS256" { throw r.error("alg", "client_secret_jwt signs with HS256") }
            config.alg = "HS256"
        }
        return config
    }
}
