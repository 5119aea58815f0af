#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Digest
import ES256
import JSON
import Locking
import Wire

/// An account's DPoP key (RFC 9449): a P-256 key made at login, stored with the
/// account's other secrets (`Session.dpopKey`), and the signer of every proof
/// the account's requests carry.
///
/// The proof header (`typ`, `alg`, the public `jwk`) is the same for every proof
/// and is encoded once. `description` shows the RFC 7638 thumbprint only: the
/// private scalar leaves this type through `storedForm` alone, for the store.
public final class DPoPKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    let key: P256Key
    /// base64url of the JOSE header, with the trailing `.`.
    private let headerPrefix: [UInt8]
    /// `jti`s are this process's random prefix and a counter: unique without a system call per proof
    /// (another process, or a restart, draws another prefix).
    private let jtiPrefix = SecureRandom.bytes(12)
    private let jtiCounter = Locked<UInt64>(0)
    /// The last access token's `ath`: a token is signed for thousands of times before it changes.
    private let lastHash = Locked<(token: String, ath: String)?>(nil)

    init(_ key: P256Key) {
        self.key = key
        headerPrefix = Self.headerPrefix(key)
    }

    private static func headerPrefix(_ key: P256Key) -> [UInt8] {
        let header = "{\"typ\":\"dpop+jwt\",\"alg\":\"ES256\",\"jwk\":\(key.publicJWK)}"
        return Array((Base64URL.encode(Array(header.utf8)) + ".").utf8)
    }

    /// A new key for a login; throws when no ES256 implementation can be loaded.
    static func generate() throws(P256Key.Unavailable) -> DPoPKey { DPoPKey(try P256Key.generate()) }

    /// The key a session record keeps: base64url of the private scalar; nil when it is not a P-256 scalar.
    convenience init?(storedForm: String) {
        guard let d = Base64URL.decode(storedForm), let key = P256Key(privateScalar: d) else { return nil }
        self.init(key)
    }

    /// What the store keeps (the secret half of the key): only `Session.toJSON` calls this.
    var storedForm: String { Base64URL.encode(key.privateScalar) }

    /// The RFC 7638 thumbprint, which a bound token's `cnf.jkt` names.
    public var thumbprint: String { key.thumbprint }

    /// A proof for one request (RFC 9449 §4.2): a fresh `jti`, `htm`, `htu` (the
    /// URL without query and fragment), `iat` the second before the current one,
    /// `ath` when the request carries `accessToken`, `nonce` when the server gave one.
    /// Servers refuse a proof from the future, and "now" at the server may be behind
    /// ours: Glewlwyd reads it with `time()`, a coarse clock that still says the
    /// previous second for a few milliseconds after each second begins, so a proof
    /// dated with the current second was refused there now and then. A second of
    /// margin covers that and sub-second skew; every server's window is far wider.
    func proof(method: String, url: String, at now: Date, accessToken: String? = nil, nonce: String? = nil) throws(P256Key.Unavailable) -> String {
        // Written directly rather than through a JSONObject: this runs on every `sign`.
        var claims: [UInt8] = []
        claims.reserveCapacity(256 + url.utf8.count)
        claims += Array(#"{"jti":""#.utf8) + jti() + Array(#"","htm":"#.utf8)
        JSONSerializer.writeString(method, to: &claims)
        claims += Array(#","htu":"#.utf8)
        JSONSerializer.writeString(Self.htu(url), to: &claims)
        claims += Array(#","iat":"#.utf8)
        JSONSerializer.writeInt(Int64(now.timeIntervalSince1970.rounded(.down)) - 1, to: &claims)
        if let accessToken { claims += Array(#","ath":""#.utf8) + Array(ath(accessToken).utf8) + [UInt8(ascii: "\"")] }
        if let nonce {
            claims += Array(#","nonce":"#.utf8)
            JSONSerializer.writeString(nonce, to: &claims)
        }
        claims.append(UInt8(ascii: "}"))
        var input = headerPrefix
        input += Array(Base64URL.encode(claims).utf8)
        let signature = try key.sign(input)
        input.append(UInt8(ascii: "."))
        input += Array(Base64URL.encode(signature).utf8)
        return String(decoding: input, as: UTF8.self)
    }

    /// A `jti` (RFC 9449 §4.2): 20 bytes, base64url, never repeated by this key in this process.
    private func jti() -> [UInt8] {
        let n = jtiCounter.withLock { n -> UInt64 in
            n += 1
            return n
        }
        return Array(Base64URL.encode(jtiPrefix + withUnsafeBytes(of: n.bigEndian, Array.init)).utf8)
    }

    /// base64url(SHA-256(token)), RFC 9449 §4.2.
    private func ath(_ token: String) -> String {
        if let last = lastHash.withLock({ $0 }), last.token == token { return last.ath }
        let ath = Base64URL.encode(SHA256.hash(token))
        lastHash.withLock { $0 = (token, ath) }
        return ath
    }

    /// The request URL as given, without query and fragment: servers compare `htu` as a string.
    static func htu(_ url: String) -> String {
        guard let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<end])
    }

    public static func == (a: DPoPKey, b: DPoPKey) -> Bool { a.key == b.key }

    public var description: String { "DPoPKey(\(thumbprint))" }
    public var debugDescription: String { description }
}
