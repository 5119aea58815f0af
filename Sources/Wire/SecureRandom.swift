/// Unpredictable bytes for secrets: PKCE verifiers and `state` on the agent's
/// side, token material on the dev issuer's.
///
/// `SystemRandomNumberGenerator` reads the kernel's CSPRNG (getrandom on Linux,
/// arc4random on Darwin), so neither can be guessed.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var out: [UInt8] = []
        out.reserveCapacity(count + 8)
        while out.count < count {
            withUnsafeBytes(of: generator.next() as UInt64) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(count))
    }

    /// `count` random bytes as base64url text.
    public static func token(bytes count: Int = 32) -> String {
        Base64URL.encode(bytes(count))
    }
}
