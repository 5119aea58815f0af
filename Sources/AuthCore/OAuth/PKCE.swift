import Digest
import Wire

/// Proof Key for Code Exchange (RFC 7636) with S256, and the `state` value
/// that ties a redirect to the login that started it.
struct PKCE: Sendable {
    /// 32 random bytes, base64url: 43 characters from the unreserved set.
    let verifier: String
    let challenge: String
    let state: String

    init() {
        verifier = SecureRandom.token(bytes: 32)
        challenge = Self.challenge(for: verifier)
        state = SecureRandom.token(bytes: 16)
    }

    static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }
}
