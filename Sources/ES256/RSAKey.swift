#if canImport(CryptoShim)
import CryptoShim
#elseif canImport(CryptoKit)
import CryptoKit
#endif
import Wire

/// An RSA key for RS256 and PS256 signatures (RFC 7518 §3.3, §3.5): a client's own
/// key for `private_key_jwt` on the agent's side, its public half for verification
/// on the dev issuer's. libcrypto does the work (through `CryptoShim`); on Apple
/// platforms there is no implementation yet, and making one throws `Unavailable`.
/// `description` never shows the key.
public final class RSAKey: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: the handle never changes after init, and libcrypto only reads the key.
    #if canImport(CryptoShim)
    private let handle: UnsafeMutableRawPointer
    #endif
    /// The public modulus and exponent, big-endian: the JWK's `n` and `e`.
    public let modulus: [UInt8]
    public let exponent: [UInt8]

    public enum Padding: Sendable {
        /// RSASSA-PKCS1-v1_5 (RS256).
        case pkcs1
        /// RSASSA-PSS with MGF1 and a 32-byte salt (PS256).
        case pss
    }

    #if canImport(CryptoShim)
    private init?(handle: UnsafeMutableRawPointer) {
        let size = Int(acrypto_rsa_size(handle))
        var n = [UInt8](repeating: 0, count: size)
        var e = [UInt8](repeating: 0, count: 8)
        var eLength = 0
        guard size >= 256, acrypto_rsa_public(handle, &n, &e, &eLength) == 1 else {
            acrypto_rsa_free(handle)
            return nil
        }
        self.handle = handle
        modulus = n
        exponent = Array(e.prefix(eLength))
    }

    /// The RSA private key of a PEM text (PKCS #1 or PKCS #8), of at least 2048 bits; nil otherwise.
    public convenience init?(pem: [UInt8]) {
        guard let handle = pem.withUnsafeBufferPointer({ buffer in
            buffer.baseAddress.flatMap { base in base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { acrypto_pem_rsa($0, buffer.count) } }
        }) else { return nil }
        self.init(handle: handle)
    }

    /// A public key from a JWK's `n` and `e`, for verification; nil when unusable or under 2048 bits.
    public convenience init?(modulus n: [UInt8], exponent e: [UInt8]) {
        let n = Array(n.drop { $0 == 0 })
        guard let handle = acrypto_rsa_from_public(n, n.count, e, e.count) else { return nil }
        self.init(handle: handle)
    }

    deinit { acrypto_rsa_free(handle) }

    public func sign(_ message: [UInt8], padding: Padding) throws(P256Key.Unavailable) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: modulus.count)
        guard acrypto_rsa_sign(handle, padding == .pss ? 1 : 0, message, message.count, &signature) == 1 else {
            throw P256Key.Unavailable(description: "libcrypto could not sign with the RSA key")
        }
        return signature
    }

    public func verify(_ signature: [UInt8], of message: [UInt8], padding: Padding) -> Bool {
        acrypto_rsa_verify(handle, padding == .pss ? 1 : 0, message, message.count, signature, signature.count) == 1
    }
    #else
    public convenience init?(pem: [UInt8]) { return nil }
    public convenience init?(modulus n: [UInt8], exponent e: [UInt8]) { return nil }
    private init() {
        modulus = []
        exponent = []
    }

    public func sign(_ message: [UInt8], padding: Padding) throws(P256Key.Unavailable) -> [UInt8] {
        throw P256Key.Unavailable(description: "RS256 and PS256 need libcrypto, which this platform's build does not use")
    }

    public func verify(_ signature: [UInt8], of message: [UInt8], padding: Padding) -> Bool { false }
    #endif

    /// The public key as a JWK in the member order RFC 7638 hashes: `{"e":…,"kty":"RSA","n":…}`.
    public var publicJWK: String {
        "{\"e\":\"\(Base64URL.encode(exponent))\",\"kty\":\"RSA\",\"n\":\"\(Base64URL.encode(modulus))\"}"
    }

    public var description: String { "RSAKey(\(modulus.count * 8) bits)" }
}

/// HMAC-SHA256 (RFC 2104), for `client_secret_jwt` (HS256, RFC 7518 §3.2): libcrypto's on
/// Linux (loaded on first use), CryptoKit's on Apple platforms.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: [UInt8]) throws(P256Key.Unavailable) -> [UInt8] {
        #if canImport(CryptoShim)
        var mac = [UInt8](repeating: 0, count: 32)
        guard acrypto_hmac_sha256(key, key.count, message, message.count, &mac) == 1 else {
            throw P256Key.Unavailable(description: "HS256 needs libcrypto (OpenSSL), which could not be loaded")
        }
        return mac
        #else
        return [UInt8](HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        #endif
    }
}

/// The kind of private key a PEM text holds, read by libcrypto without keeping it.
public enum PEMKeyKind: Sendable {
    case p256, rsa

    public init?(pem: [UInt8]) {
        #if canImport(CryptoShim)
        let kind = pem.withUnsafeBufferPointer { buffer in
            buffer.baseAddress.map { base in base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { acrypto_pem_kind($0, buffer.count) } } ?? 0
        }
        switch kind {
        case 1: self = .p256
        case 2: self = .rsa
        default: return nil
        }
        #else
        guard P256Key(pem: pem) != nil else { return nil }
        self = .p256
        #endif
    }
}
