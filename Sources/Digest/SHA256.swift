#if canImport(CryptoKit)
import CryptoKit
#endif

/// SHA-256 (FIPS 180-4 §6.2), for PKCE code challenges (RFC 7636 S256) and
/// anything else that needs a digest without a package dependency.
///
/// Apple platforms use CryptoKit, which is faster and audited; elsewhere
/// (Linux has no CryptoKit and Foundation offers no digest) the portable
/// `Hasher` does the work. `Hasher` is compiled and tested everywhere, so the
/// two stay interchangeable.
public enum SHA256 {
    /// Bytes in a digest.
    public static let digestByteCount = 32

    /// The 32-byte digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(CryptoKit.SHA256.hash(data: bytes))
        #else
        var hasher = Hasher()
        hasher.update(bytes)
        return hasher.finalize()
        #endif
    }

    /// The digest of the UTF-8 encoding of `text`.
    public static func hash(_ text: String) -> [UInt8] {
        hash(Array(text.utf8))
    }
}
