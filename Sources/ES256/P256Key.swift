#if canImport(CryptoShim)
import CryptoShim
import Dispatch
import Locking
#elseif canImport(CryptoKit)
import CryptoKit
import Foundation
#endif
import Digest
import Wire

/// A P-256 key for ES256 signatures (RFC 7518 §3.4): DPoP proofs on the agent's
/// side, their verification on the dev issuer's.
///
/// The elliptic-curve work is libcrypto's (through `CryptoShim`, loaded on first
/// use) on Linux and CryptoKit's on Apple platforms — never code of this project.
/// The private scalar is readable (`privateScalar`) only so that the session
/// store can keep it with the account's other secrets; `description` shows the
/// thumbprint alone.
public final class P256Key: @unchecked Sendable, Equatable, CustomStringConvertible {
    // @unchecked: the handle never changes after init; libcrypto only reads the key, and the
    // nonce pool behind the handle has its own lock (see CryptoShim.h).
    #if canImport(CryptoShim)
    private let handle: UnsafeMutableRawPointer
    /// Whether a background refill of the precomputed nonces is under way.
    private let refilling = Locked(false)
    #elseif canImport(CryptoKit)
    private let signing: P256.Signing.PrivateKey?
    private let verifying: P256.Signing.PublicKey
    #endif
    /// The public point's affine coordinates, 32 big-endian bytes each.
    public let x: [UInt8]
    public let y: [UInt8]
    /// Whether the key can sign (false for a key read from someone's JWK).
    public let isPrivate: Bool

    public struct Unavailable: Error, CustomStringConvertible {
        public let description: String
    }

    static let missing = Unavailable(description: "ES256 needs libcrypto (OpenSSL), which could not be loaded")

    #if canImport(CryptoShim)
    private init(handle: UnsafeMutableRawPointer, isPrivate: Bool) throws(Unavailable) {
        var x = [UInt8](repeating: 0, count: 32)
        var y = [UInt8](repeating: 0, count: 32)
        guard acrypto_p256_public(handle, &x, &y) == 1 else {
            acrypto_p256_free(handle)
            throw Unavailable(description: "libcrypto could not read a P-256 public key")
        }
        self.handle = handle
        self.x = x
        self.y = y
        self.isPrivate = isPrivate
    }

    /// Keeps the key's pool of precomputed signing nonces full, off the caller's thread:
    /// the scalar multiplication that dominates an ECDSA signature then happens before
    /// the request is known, and `sign` (a proof per `sign` call) stays fast.
    private func refill() {
        guard refilling.withLock({ busy in defer { busy = true }; return !busy }) else { return }
        if !Refiller.request(self) { refilling.withLock { $0 = false } }
    }

    /// Run by `Refiller`'s thread.
    fileprivate func fill() {
        _ = acrypto_p256_precompute(handle, 64)
        refilling.withLock { $0 = false }
    }

    /// A new random key.
    public static func generate() throws(Unavailable) -> P256Key {
        guard let handle = acrypto_p256_generate() else { throw missing }
        return try P256Key(handle: handle, isPrivate: true)
    }

    /// The key whose private scalar is `d` (32 bytes); nil when `d` is not one.
    public convenience init?(privateScalar d: [UInt8]) {
        guard d.count == 32, let handle = acrypto_p256_from_private(d) else { return nil }
        try? self.init(handle: handle, isPrivate: true)
    }

    /// A public key for verification; nil when (x, y) is not a point on P-256.
    public convenience init?(x: [UInt8], y: [UInt8]) {
        guard x.count == 32, y.count == 32, let handle = acrypto_p256_from_public(x, y) else { return nil }
        try? self.init(handle: handle, isPrivate: false)
    }

    /// The P-256 private key of a PEM text (SEC 1 or PKCS #8), a client's own signing key;
    /// nil when the text holds no such key (another curve, an encrypted key, not PEM).
    public convenience init?(pem: [UInt8]) {
        guard let handle = pem.withUnsafeBufferPointer({ buffer in
            buffer.baseAddress.flatMap { base in base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { acrypto_pem_p256($0, buffer.count) } }
        }) else { return nil }
        try? self.init(handle: handle, isPrivate: true)
    }

    deinit { acrypto_p256_free(handle) }

    /// The private scalar, 32 big-endian bytes; empty for a public key.
    public var privateScalar: [UInt8] {
        var d = [UInt8](repeating: 0, count: 32)
        guard isPrivate, acrypto_p256_private(handle, &d) == 1 else { return [] }
        return d
    }

    /// The ES256 signature of `message` as JWS wants it: r || s, 64 bytes.
    public func sign(_ message: [UInt8]) throws(Unavailable) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        guard isPrivate, acrypto_es256_sign(handle, message, message.count, &signature) == 1 else {
            throw Unavailable(description: "libcrypto could not sign with the DPoP key")
        }
        // Filled once the key signs (a key read from the store for a one-shot command may never),
        // then refilled in batches: one wake-up per 32 signatures.
        if acrypto_p256_pooled(handle) < 32 { refill() }
        return signature
    }

    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        signature.count == 64 && acrypto_es256_verify(handle, message, message.count, signature) == 1
    }
    #elseif canImport(CryptoKit)
    private init(signing: P256.Signing.PrivateKey?, verifying: P256.Signing.PublicKey) {
        self.signing = signing
        self.verifying = verifying
        let raw = [UInt8](verifying.rawRepresentation)
        x = Array(raw[0..<32])
        y = Array(raw[32..<64])
        isPrivate = signing != nil
    }

    public static func generate() throws(Unavailable) -> P256Key {
        let key = P256.Signing.PrivateKey()
        return P256Key(signing: key, verifying: key.publicKey)
    }

    public convenience init?(privateScalar d: [UInt8]) {
        guard let key = try? P256.Signing.PrivateKey(rawRepresentation: d) else { return nil }
        self.init(signing: key, verifying: key.publicKey)
    }

    public convenience init?(x: [UInt8], y: [UInt8]) {
        guard x.count == 32, y.count == 32, let key = try? P256.Signing.PublicKey(rawRepresentation: x + y) else { return nil }
        self.init(signing: nil, verifying: key)
    }

    public convenience init?(pem: [UInt8]) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self)) else { return nil }
        self.init(signing: key, verifying: key.publicKey)
    }

    public var privateScalar: [UInt8] { signing.map { [UInt8]($0.rawRepresentation) } ?? [] }

    public func sign(_ message: [UInt8]) throws(Unavailable) -> [UInt8] {
        guard let signing, let signature = try? signing.signature(for: Data(message)) else {
            throw Unavailable(description: "CryptoKit could not sign with the DPoP key")
        }
        return [UInt8](signature.rawRepresentation)
    }

    public func verify(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
        return verifying.isValidSignature(signature, for: Data(message))
    }
    #endif

    /// The public key as a JWK (RFC 7517) in the member order RFC 7638 hashes:
    /// `{"crv":"P-256","kty":"EC","x":…,"y":…}`.
    public var publicJWK: String {
        "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(Base64URL.encode(x))\",\"y\":\"\(Base64URL.encode(y))\"}"
    }

    /// The RFC 7638 JWK thumbprint: base64url(SHA-256(the canonical JWK)), what a DPoP-bound token's `cnf.jkt` holds.
    public var thumbprint: String { Base64URL.encode(SHA256.hash(publicJWK)) }

    public static func == (a: P256Key, b: P256Key) -> Bool {
        a.x == b.x && a.y == b.y && a.isPrivate == b.isPrivate
    }

    public var description: String { "P256Key(\(thumbprint))" }
}

#if canImport(CryptoShim)
/// One long-lived thread that fills the keys' nonce pools. Not Dispatch's: a worker
/// thread Dispatch retires runs libcrypto's thread-exit handlers, which race with
/// libcrypto's own cleanup when the process exits at the same moment.
private enum Refiller {
    private static let pending = Locked<[P256Key]>([])
    private static let wake = DispatchSemaphore(value: 0)
    private static let started = DetachedThread.start {
        while true {
            wake.wait()
            for key in pending.withLock({ keys in defer { keys = [] }; return keys }) { key.fill() }
        }
    }

    /// Queues `key` for a refill; false when no thread could be started (signatures are then made whole).
    static func request(_ key: P256Key) -> Bool {
        guard started else { return false }
        pending.withLock { $0.append(key) }
        wake.signal()
        return true
    }
}
#endif
