import JSON
import Wire

/// Tokens in JWT shape, so clients can read `exp` and claims the way they would
/// from a real identity provider.
///
/// The third segment is 32 random bytes, **not** an HMAC: the header says HS256
/// only to look familiar. The issuer recognizes its tokens by looking them up
/// in its own table, so nothing ever verifies a signature and there is no key
/// to leak or to mis-share between tests. Do not verify these cryptographically.
enum DevJWT {
    static let header: JSONValue = ["alg": "HS256", "typ": "JWT"]

    static func mint(claims: JSONObject) -> String {
        let segments = [
            Base64URL.encode(JSONSerializer.bytes(header)),
            Base64URL.encode(JSONSerializer.bytes(.object(claims))),
            SecureRandom.token(bytes: 32),
        ]
        return segments.joined(separator: ".")
    }

}
