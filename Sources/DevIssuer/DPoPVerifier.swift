import Digest
import ES256
import JSON
import Wire

/// Checks a DPoP proof (RFC 9449 §4.3) as a server must, independently of the
/// agent's proof builder: its own JOSE parsing, and ES256 verification of the
/// signature with the key in the proof's `jwk`. Replay (`jti`) and nonces need
/// memory and are `DPoPState`'s.
public enum DPoPVerifier {
    /// What a valid proof says.
    public struct Proof: Sendable, Equatable {
        /// The RFC 7638 thumbprint of the proof's key: what a bound token's `cnf.jkt` must equal.
        public let jkt: String
        public let jti: String
        public let iat: Int64
        public let nonce: String?
    }

    /// Seconds a proof's `iat` may lie in the past, and in the future (clock skew).
    public static let maxAge: Int64 = 60
    public static let maxSkew: Int64 = 5

    /// The proof's claims when it is a well-formed ES256 `dpop+jwt` signed by its own
    /// `jwk`, made for `method` and `url` (compared without query and fragment) within
    /// the `iat` window, and — when `accessToken` is given — carrying its `ath`; else why not.
    public static func verify(_ proof: String, method: String, url: String, accessToken: String?, now: Double) -> Result<Proof, Refusal> {
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Base64URL.decode(String(parts[0])), let claimBytes = Base64URL.decode(String(parts[1])),
              let signature = Base64URL.decode(String(parts[2])),
              let header = (try? JSONParser.parse(headerBytes))?.objectValue, let claims = (try? JSONParser.parse(claimBytes))?.objectValue
        else { return .failure(Refusal("not a JWS in compact form")) }
        guard header["typ"]?.stringValue == "dpop+jwt" else { return .failure(Refusal("typ is not dpop+jwt")) }
        guard header["alg"]?.stringValue == "ES256" else { return .failure(Refusal("alg is not ES256")) }
        guard let jwk = header["jwk"]?.objectValue, jwk["kty"]?.stringValue == "EC", jwk["crv"]?.stringValue == "P-256",
              jwk["d"] == nil, let x = jwk["x"]?.stringValue.flatMap(Base64URL.decode), let y = jwk["y"]?.stringValue.flatMap(Base64URL.decode),
              let key = P256Key(x: x, y: y)
        else { return .failure(Refusal("jwk is not a public P-256 key")) }
        guard key.verify(signature, of: Array("\(parts[0]).\(parts[1])".utf8)) else { return .failure(Refusal("the signature does not verify")) }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { return .failure(Refusal("jti is missing")) }
        guard claims["htm"]?.stringValue == method else { return .failure(Refusal("htm is not \(method)")) }
        guard let htu = claims["htu"]?.stringValue, htu == withoutQuery(url) else { return .failure(Refusal("htu is not \(withoutQuery(url))")) }
        guard let iat = claims["iat"]?.intValue else { return .failure(Refusal("iat is missing")) }
        let second = Int64(now.rounded(.down))
        guard iat <= second + maxSkew else { return .failure(Refusal("iat is in the future")) }
        guard iat >= second - maxAge else { return .failure(Refusal("iat is too old")) }
        if let accessToken {
            guard claims["ath"]?.stringValue == Base64URL.encode(SHA256.hash(accessToken)) else { return .failure(Refusal("ath does not match the access token")) }
        }
        return .success(Proof(jkt: key.thumbprint, jti: jti, iat: iat, nonce: claims["nonce"]?.stringValue))
    }

    /// Why a proof was refused: the `error_description` of `invalid_dpop_proof`.
    public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        init(_ text: String) { description = text }
    }

    static func withoutQuery(_ url: String) -> String {
        guard let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<end])
    }
}
