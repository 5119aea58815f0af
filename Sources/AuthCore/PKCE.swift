import Digest

/// Proof Key for Code Exchange (RFC 7636) with S256, and the `state` value
/// that ties a redirect to the login that started it.
struct PKCE: Sendable {
    /// 32 random bytes, base64url: 43 characters from the unreserved set.
    let verifier: String
    let challenge: String
    let state: String

    init() {
        verifier = Base64URL.encode(Self.randomBytes(32))
        challenge = Self.challenge(for: verifier)
        state = Base64URL.encode(Self.randomBytes(16))
    }

    static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    /// From the system's CSPRNG (getrandom on Linux, arc4random on Apple platforms).
    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
}
