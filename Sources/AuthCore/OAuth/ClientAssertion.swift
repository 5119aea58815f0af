#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import ES256
import JSON
import Wire

/// The signed JWT a client authenticates with (RFC 7523 §2.2, §3; OpenID Connect Core §9):
/// `iss` and `sub` the client id, `aud` the endpoint it is sent to — or the issuer, where a
/// profile says so (FAPI 2.0) —, a `jti` never used before, `iat` now and `exp` a minute on.
/// A new one for every request (servers refuse a replayed `jti`).
enum ClientAssertion {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    /// Seconds an assertion is valid: one request's worth.
    static let lifetime: Int64 = 60

    /// The compact JWS; `sign` signs the header and claims as JWS's signing input.
    static func make(clientId: String, audience: String, alg: String, kid: String?, now: Date,
                     sign: ([UInt8]) throws(P256Key.Unavailable) -> [UInt8]) throws(P256Key.Unavailable) -> String {
        var header: JSONObject = ["alg": .string(alg), "typ": "JWT"]
        if let kid { header["kid"] = .string(kid) }
        let iat = Int64(now.timeIntervalSince1970.rounded(.down))
        let claims: JSONObject = ["iss": .string(clientId), "sub": .string(clientId), "aud": .string(audience),
                                  "jti": .string(SecureRandom.token(bytes: 18)), "iat": .int(iat), "exp": .int(iat + lifetime)]
        let input = Base64URL.encode(JSONSerializer.bytes(.object(header))) + "." + Base64URL.encode(JSONSerializer.bytes(.object(claims)))
        return input + "." + Base64URL.encode(try sign(Array(input.utf8)))
    }

    /// The assertion `config`'s client sends to `endpoint`, as the form pairs that carry it;
    /// a key that cannot be used, or no libcrypto, is a failure naming it (never the key).
    static func pairs(_ config: ProviderConfig, endpoint: String, now: Date) -> Result<[(String, String)], ClientKeyProblem> {
        guard let auth = config.clientAuth else { return .success([]) }
        let clientId = config.clientId ?? ""
        let audience = config.assertionAudience(endpoint: endpoint)
        do throws(P256Key.Unavailable) {
            let assertion: String
            switch auth.method {
            case .clientSecretJWT:
                let secret = Array((config.clientSecret ?? "").utf8)
                assertion = try make(clientId: clientId, audience: audience, alg: "HS256", kid: auth.kid, now: now) { input throws(P256Key.Unavailable) in
                    try HMACSHA256.mac(key: secret, message: input)
                }
            case .privateKeyJWT:
                let key: ClientKey
                switch ClientKeys.load(auth.keySource(provider: config.id)) {
                case .failure(let problem): return .failure(problem)
                case .success(let loaded): key = loaded
                }
                let alg = auth.alg ?? key.defaultAlgorithm
                if let problem = key.algorithmProblem(alg) { return .failure(ClientKeyProblem(path: auth.keyPath ?? "", problem: problem)) }
                assertion = try make(clientId: clientId, audience: audience, alg: alg, kid: auth.kid, now: now) { input throws(P256Key.Unavailable) in
                    try key.sign(input, alg: alg)
                }
            }
            return .success([("client_assertion_type", type), ("client_assertion", assertion)])
        } catch {
            return .failure(ClientKeyProblem(path: auth.keyPath ?? "", problem: error.description))
        }
    }
}
