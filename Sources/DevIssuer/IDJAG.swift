import ES256
import JSON
import Locking
import Wire

/// The issuer's ES256 key, made on first use: what its ID-JAGs are signed with, published at `/jwks` for the
/// authorization servers that accept them. The issuer's other tokens stay table-checked (`DevJWT`).
final class IssuerSigningKey: Sendable {
    private let key = Locked<P256Key?>(nil)

    func current() throws(P256Key.Unavailable) -> P256Key {
        if let made = key.current { return made }
        let fresh = try P256Key.generate()
        return key.withLock { held in
            if let held { return held }
            held = fresh
            return fresh
        }
    }

    /// The JWK Set (RFC 7517 §5): the public key, its `kid` its RFC 7638 thumbprint.
    func jwks() throws(P256Key.Unavailable) -> JSONValue {
        let key = try current()
        guard case .object(var jwk)? = try? JSONParser.parse(Array(key.publicJWK.utf8)) else { return ["keys": []] }
        jwk["kid"] = .string(key.thumbprint)
        jwk["alg"] = "ES256"
        jwk["use"] = "sig"
        return ["keys": [.object(jwk)]]
    }
}

/// Identity Assertion JWT Authorization Grants (draft-ietf-oauth-identity-assertion-authz-grant): the IdP side
/// mints them in an RFC 8693 exchange (`TokenExchangeGrant`), the API's authorization server side checks them
/// in the jwt-bearer grant (`JWTBearerGrant`).
enum IDJAG {
    static let tokenType = "urn:ietf:params:oauth:token-type:id-jag"
    static let jwtType = "oauth-id-jag+jwt"
    /// Seconds an ID-JAG lives: long enough for the one grant it is for.
    static let lifetime: Int64 = 300

    /// `GET /jwks`.
    static func jwks(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let set = try? context.state.signing.jwks() else { return .error(500, "server_error", "libcrypto is not available to make a signing key") }
        return .json(200, set)
    }

    /// A signed ID-JAG with the draft's claims.
    static func mint(user: UserProfile, audience: String, clientID: String, resource: String?, scope: String?,
                     issuer: String, now: Double, key: P256Key) throws(P256Key.Unavailable) -> String {
        let iat = Int64(now.rounded(.down))
        var claims: JSONObject = [
            "iss": .string(issuer), "sub": .string(user.username), "aud": .string(audience), "client_id": .string(clientID),
            "jti": .string(SecureRandom.token(bytes: 12)), "iat": .int(iat), "exp": .int(iat + lifetime),
        ]
        if let resource { claims["resource"] = .string(resource) }
        if let scope { claims["scope"] = .string(scope) }
        let header: JSONValue = ["alg": "ES256", "typ": .string(jwtType), "kid": .string(key.thumbprint)]
        let input = Base64URL.encode(JSONSerializer.bytes(header)) + "." + Base64URL.encode(JSONSerializer.bytes(.object(claims)))
        return input + "." + Base64URL.encode(try key.sign(Array(input.utf8)))
    }

    /// What a checked ID-JAG grants.
    struct Grant: Equatable {
        let subject: String
        let clientID: String
        let resource: String?
        let scope: String?
    }

    /// Checks an ID-JAG as the draft's §5.1 asks: `typ`, a trusted `iss` whose key (`keys(iss)`, its JWKS) verifies the
    /// ES256 signature, `aud` this issuer, unexpired, `client_id` the authenticated client. The refusal is a description for `invalid_grant`.
    static func verify(_ assertion: String, issuer: String, clientID: String, trusted: [String], now: Double,
                       keys: (String) -> [JSONObject]) -> Result<Grant, ClientAssertionCheck.Refusal> {
        typealias Refusal = ClientAssertionCheck.Refusal
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let header = Base64URL.decode(String(parts[0])).flatMap({ try? JSONParser.parse($0) })?.objectValue,
              let claims = Base64URL.decode(String(parts[1])).flatMap({ try? JSONParser.parse($0) })?.objectValue,
              let signature = Base64URL.decode(String(parts[2]))
        else { return .failure(Refusal("the assertion is not a JWS in compact form")) }
        guard header["typ"]?.stringValue == jwtType else { return .failure(Refusal("the assertion's typ is not \(jwtType)")) }
        guard let iss = claims["iss"]?.stringValue, trusted.contains(iss) else { return .failure(Refusal("the assertion's issuer is not trusted")) }
        let input = Array("\(parts[0]).\(parts[1])".utf8)
        let verified = keys(iss).contains { jwk in
            (header["kid"] == nil || jwk["kid"] == header["kid"]) && ClientAssertionCheck.publicKey(jwk)?
                .verify(signature, of: input, alg: header["alg"]?.stringValue ?? "") == true
        }
        guard verified else { return .failure(Refusal("the assertion's signature does not verify with its issuer's keys")) }
        guard claims["aud"]?.stringValue == issuer || claims["aud"]?.arrayValue?.contains(.string(issuer)) == true else {
            return .failure(Refusal("the assertion's aud is not this authorization server (\(issuer))"))
        }
        guard let exp = claims["exp"]?.intValue, Double(exp) > now else { return .failure(Refusal("the assertion has expired")) }
        guard let subject = claims["sub"]?.stringValue else { return .failure(Refusal("the assertion has no sub")) }
        guard claims["client_id"]?.stringValue == clientID else { return .failure(Refusal("the assertion was issued for another client")) }
        return .success(Grant(subject: subject, clientID: clientID, resource: claims["resource"]?.stringValue, scope: claims["scope"]?.stringValue))
    }

    /// A trusted issuer's keys, fetched from its `/jwks` (the dev issuer's own layout).
    static func fetchKeys(of issuer: String) -> [JSONObject] {
        guard let (status, body) = LoopbackGet.get(issuer + "/jwks", maxBytes: 64 * 1024), status == 200,
              let set = (try? JSONParser.parse(body))?.objectValue else { return [] }
        return set["keys"]?.arrayValue?.compactMap(\.objectValue) ?? []
    }
}
