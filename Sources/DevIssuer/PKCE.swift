import Digest
import Wire

/// Proof Key for Code Exchange (RFC 7636), S256 only: `plain` protects nothing
/// against an attacker who can read the authorization request.
enum PKCE {
    /// RFC 7636 §4.2: a challenge is BASE64URL(SHA256(verifier)), always 43 characters.
    static func isWellFormedChallenge(_ challenge: String) -> Bool {
        challenge.utf8.count == 43 && challenge.utf8.allSatisfy(isBase64URL)
    }

    /// RFC 7636 §4.1: 43–128 unreserved characters.
    static func isWellFormedVerifier(_ verifier: String) -> Bool {
        (43...128).contains(verifier.utf8.count) && verifier.utf8.allSatisfy { isBase64URL($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "~") }
    }

    /// RFC 7636 §4.6: whether `verifier` hashes to `challenge`.
    static func verify(verifier: String, challenge: String) -> Bool {
        guard isWellFormedVerifier(verifier) else { return false }
        return SecretComparison.equal(Base64URL.encode(SHA256.hash(Array(verifier.utf8))), challenge)
    }

    private static func isBase64URL(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z"))
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "_")
    }
}
