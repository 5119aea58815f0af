import ES256
import JSON
import Wire

/// Checks a client assertion (RFC 7523 §3, OpenID Connect Core §9) as a server must, with its own
/// JOSE parsing: `private_key_jwt` signed by the key the client registered (ES256, RS256, PS256),
/// or `client_secret_jwt` (HS256 over the client's secret); `iss` = `sub` = the client, `aud` the
/// endpoint's URL or the issuer, unexpired, at most five minutes long, `jti` never seen before.
enum ClientAssertionCheck {
    enum Method: Equatable {
        case privateKeyJWT, clientSecretJWT
    }

    /// The client the assertion authenticates and how, or why it does not (a description for `invalid_client`).
    static func verify(_ assertion: String, endpoint: String, context: RouteContext) -> Result<(clientID: String, method: Method), Refusal> {
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let claimBytes = Base64URL.decode(String(parts[1])),
              let signature = Base64URL.decode(String(parts[2])),
              let header = (try? JSONParser.parse(headerBytes))?.objectValue, let claims = (try? JSONParser.parse(claimBytes))?.objectValue,
              let alg = header["alg"]?.stringValue
        else { return .failure(Refusal("client_assertion is not a JWS in compact form")) }
        guard let clientID = claims["iss"]?.stringValue, claims["sub"]?.stringValue == clientID else {
            return .failure(Refusal("client_assertion's iss and sub must both be the client id"))
        }
        guard let secret = context.state.clients[clientID] else { return .failure(Refusal("unknown client")) }
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        let method: Method
        if alg == "HS256" {
            guard let secret, let mac = try? HMACSHA256.mac(key: Array(secret.utf8), message: input),
                  SecretComparison.equal(Base64URL.encode(mac), Base64URL.encode(signature)) else {
                return .failure(Refusal("client_secret_jwt: the signature does not verify with the client's secret"))
            }
            method = .clientSecretJWT
        } else {
            guard let jwk = context.state.clientPolicies.policy(clientID).jwk, let key = publicKey(jwk) else {
                return .failure(Refusal("private_key_jwt: client \(clientID) has no registered public key"))
            }
            guard key.verify(signature, of: input, alg: alg) else {
                return .failure(Refusal("private_key_jwt: the \(alg) signature does not verify with the client's registered key"))
            }
            method = .privateKeyJWT
        }
        let audiences = claims["aud"]?.stringValue.map { [$0] } ?? claims["aud"]?.arrayValue?.compactMap(\.stringValue) ?? []
        guard audiences.contains(endpoint) || audiences.contains(context.issuer) else {
            return .failure(Refusal("client_assertion's aud must be \(endpoint) or the issuer \(context.issuer)"))
        }
        guard let exp = claims["exp"]?.intValue, Double(exp) > context.now else { return .failure(Refusal("client_assertion has expired")) }
        guard Double(exp) - context.now <= 300 else { return .failure(Refusal("client_assertion lives longer than 5 minutes")) }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { return .failure(Refusal("client_assertion has no jti")) }
        guard context.state.clientPolicies.firstUse(jti: jti, expiresAt: Double(exp), now: context.now) else {
            return .failure(Refusal("client_assertion's jti was already used"))
        }
        return .success((clientID, method))
    }

    struct Refusal: Error, Equatable {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A verifier for a public JWK: EC P-256 (ES256) or RSA of 2048 bits or more (RS256, PS256).
    enum PublicKey {
        case p256(P256Key)
        case rsa(RSAKey)

        func verify(_ signature: [UInt8], of input: [UInt8], alg: String) -> Bool {
            switch (self, alg) {
            case (.p256(let key), "ES256"): return key.verify(signature, of: input)
            case (.rsa(let key), "RS256"): return key.verify(signature, of: input, padding: .pkcs1)
            case (.rsa(let key), "PS256"): return key.verify(signature, of: input, padding: .pss)
            default: return false
            }
        }
    }

    static func publicKey(_ jwk: JSONObject) -> PublicKey? {
        guard jwk["d"] == nil else { return nil }
        func bytes(_ name: String) -> [UInt8]? { jwk[name]?.stringValue.flatMap(Base64URL.decode) }
        switch jwk["kty"]?.stringValue {
        case "EC":
            guard jwk["crv"]?.stringValue == "P-256", let x = bytes("x"), let y = bytes("y"), let key = P256Key(x: x, y: y) else { return nil }
            return .p256(key)
        case "RSA":
            guard let n = bytes("n"), let e = bytes("e"), let key = RSAKey(modulus: n, exponent: e) else { return nil }
            return .rsa(key)
        default:
            return nil
        }
    }
}
