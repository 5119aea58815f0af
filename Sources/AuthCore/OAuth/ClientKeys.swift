#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ES256
import JSON
import Locking
import Wire

/// A client's own signing key for `private_key_jwt`: a P-256 or RSA private key read from a
/// PEM file by libcrypto. Only its public half ever leaves this type (`publicJWK`);
/// `description` names the kind alone.
enum ClientKey: Sendable, CustomStringConvertible {
    case p256(P256Key)
    case rsa(RSAKey)

    /// The algorithm a key signs with when the configuration names none.
    var defaultAlgorithm: String {
        switch self {
        case .p256: return "ES256"
        case .rsa: return "RS256"
        }
    }

    /// Why `alg` cannot be made with this key, or nil.
    func algorithmProblem(_ alg: String) -> String? {
        switch (self, alg) {
        case (.p256, "ES256"), (.rsa, "RS256"), (.rsa, "PS256"): return nil
        case (.p256, _): return "the key is a P-256 key, which signs ES256, not \(alg)"
        case (.rsa, _): return "the key is an RSA key, which signs RS256 or PS256, not \(alg)"
        }
    }

    func sign(_ input: [UInt8], alg: String) throws(P256Key.Unavailable) -> [UInt8] {
        switch self {
        case .p256(let key): return try key.sign(input)
        case .rsa(let key): return try key.sign(input, padding: alg == "PS256" ? .pss : .pkcs1)
        }
    }

    /// The public key as a JWK to register at the server, with `kid`, `use` and `alg` when given.
    func publicJWK(kid: String?, alg: String?) -> String {
        var jwk: String
        switch self {
        case .p256(let key): jwk = key.publicJWK
        case .rsa(let key): jwk = key.publicJWK
        }
        jwk.removeLast()
        if let alg { jwk += ",\"alg\":\"\(alg)\"" }
        if let kid { jwk += ",\"kid\":" + JSONSerializer.string(.string(kid)) }
        return jwk + ",\"use\":\"sig\"}"
    }

    var description: String {
        switch self {
        case .p256: return "ClientKey(P-256)"
        case .rsa(let key): return "ClientKey(\(key))"
        }
    }
}

/// The client keys read so far, by where they are: a key is read (and libcrypto loaded) once per process.
enum ClientKeys {
    private static let loaded = Locked<[String: ClientKey]>([:])

    /// Where a client key lives: a PEM file, or the keyring's item for a provider (`ClientKeyring`).
    enum Source: Sendable, Equatable {
        case file(String)
        case keyring(provider: String)
    }

    static func load(_ source: Source) -> Result<ClientKey, ClientKeyProblem> {
        switch source {
        case .file(let path): return load(path)
        case .keyring(let provider):
            let name = "keyring:" + provider
            if let key = loaded.withLock({ $0[name] }) { return .success(key) }
            let what = "of \(provider) in the keyring"
            let kept = ClientKeyring.read(provider: provider)
            if let why = kept.unavailable { return .failure(ClientKeyProblem(path: what, problem: why)) }
            guard let pem = kept.pem else {
                return .failure(ClientKeyProblem(path: what, problem: "there is none (make one with: auth-agent config add \(provider) … --generate-key)"))
            }
            guard let p256 = P256Key(pem: Array(pem.utf8)) else { return .failure(ClientKeyProblem(path: what, problem: "it holds no P-256 key")) }
            loaded.withLock { $0[name] = .p256(p256) }
            return .success(.p256(p256))
        }
    }

    /// The key in the PEM file at `path`, refused — naming why, never showing the key — when the file
    /// is not a regular file of the user's, when others may read it (as ssh refuses `~/.ssh/id_*`),
    /// or when it holds no unencrypted P-256 or RSA (2048 bits or more) private key.
    static func load(_ path: String) -> Result<ClientKey, ClientKeyProblem> {
        if let key = loaded.withLock({ $0[path] }) { return .success(key) }
        let fd = POSIX.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ClientKeyProblem(path: path, problem: "cannot read it: \(POSIX.errorText())")) }
        defer { POSIX.close(fd) }
        guard let st = POSIX.status(fd), st.st_mode & S_IFMT == S_IFREG else {
            return .failure(ClientKeyProblem(path: path, problem: "it is not a regular file"))
        }
        if st.st_uid != geteuid() {
            return .failure(ClientKeyProblem(path: path, problem: "it belongs to another user (uid \(st.st_uid)); use a key file of your own"))
        }
        if st.st_mode & 0o077 != 0 {
            return .failure(ClientKeyProblem(path: path, problem: "other users can read or change it (mode \(String(st.st_mode & 0o777, radix: 8))); run: chmod 600 \(path)"))
        }
        guard let pem = POSIX.readAll(fd, limit: 64 << 10) else {
            return .failure(ClientKeyProblem(path: path, problem: "cannot read it (or it is larger than 64 KiB)"))
        }
        let key: ClientKey
        switch PEMKeyKind(pem: pem) {
        case .p256?:
            guard let p256 = P256Key(pem: pem) else { return .failure(ClientKeyProblem(path: path, problem: "libcrypto could not read its P-256 key")) }
            key = .p256(p256)
        case .rsa?:
            guard let rsa = RSAKey(pem: pem) else { return .failure(ClientKeyProblem(path: path, problem: "its RSA key is shorter than 2048 bits or unreadable")) }
            key = .rsa(rsa)
        case nil:
            return .failure(ClientKeyProblem(path: path, problem: "it holds no unencrypted P-256 or RSA private key in PEM form (or libcrypto could not be loaded)"))
        }
        loaded.withLock { $0[path] = key }
        return .success(key)
    }
}

/// Why a client key file cannot be used (or made); says nothing of the key's contents.
public struct ClientKeyProblem: Error, Sendable, CustomStringConvertible {
    let path: String
    let problem: String

    /// An empty `path` is `client_secret_jwt`'s signing, which has no key file.
    public var description: String { path.isEmpty ? "client_secret_jwt cannot sign: \(problem)" : "the client key \(path) cannot be used: \(problem)" }
}

/// The OS keyring's items holding generated client keys (`key: "keyring"`): one per provider, in the
/// agent's keyring scope `client-keys`, labelled `auth-agent: client key of ID` — the Secret Service
/// through libsecret on Linux, the Keychain on macOS, as the session store's secrets are.
public enum ClientKeyring {
    static let scope = "client-keys"
    static let item = "client-key"

    /// nil when a keyring answers within a second, else why not.
    public static func unavailable() -> String? { StoreOpening.Keyring.system.probe(StoreOpening.probeTimeout) }

    /// Keeps `pem` as `provider`'s client key (replacing one kept before); nil when kept, else why not.
    static func store(_ pem: String, provider: String) -> String? {
        if let why = unavailable() { return why }
        do {
            try StoreOpening.Keyring.system.open(scope).write(pem, provider: provider, item: item, label: "auth-agent: client key of \(provider)", account: nil)
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// `provider`'s kept key (nil: none), or why the keyring could not say.
    static func read(provider: String) -> (pem: String?, unavailable: String?) {
        if let why = unavailable() { return (nil, why) }
        do {
            return (try StoreOpening.Keyring.system.open(scope).read(provider: provider, item: item), nil)
        } catch {
            return (nil, "\(error)")
        }
    }
}

/// `auth-agent config add --generate-key`: a new P-256 key for `private_key_jwt`, kept in the keyring
/// (`ClientKeyring`) or a file the configuration names, and the public JWK to register at the server.
public enum ClientKeyFile {
    /// Makes a key and keeps it in the keyring as `provider`'s; the public JWK and its `kid`, or why it could not be kept.
    public static func generate(inKeyringFor provider: String) -> Result<(jwk: String, kid: String), ClientKeyProblem> {
        let key: P256Key
        do {
            key = try P256Key.generate()
        } catch {
            return .failure(ClientKeyProblem(path: "of \(provider) in the keyring", problem: error.description))
        }
        if let why = ClientKeyring.store(pem(key), provider: provider) { return .failure(ClientKeyProblem(path: "of \(provider) in the keyring", problem: why)) }
        let kid = key.thumbprint
        return .success((ClientKey.p256(key).publicJWK(kid: kid, alg: "ES256"), kid))
    }

    /// Makes a key (libcrypto's), writes it to `path` as a PEM (SEC 1) file created 0600 — never over
    /// an existing file; its directory made 0700 when missing — and returns the public JWK (with
    /// `kid`, the RFC 7638 thumbprint, `alg: ES256` and `use: sig`) and that `kid`.
    public static func generate(at path: String) -> Result<(jwk: String, kid: String), ClientKeyProblem> {
        let key: P256Key
        do {
            key = try P256Key.generate()
        } catch {
            return .failure(ClientKeyProblem(path: path, problem: error.description))
        }
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let directory = String(path[..<slash])
            if POSIX.status(directory) == nil, mkdir(directory, 0o700) != 0 {
                return .failure(ClientKeyProblem(path: path, problem: "cannot make \(directory): \(POSIX.errorText())"))
            }
        }
        let fd = POSIX.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return .failure(ClientKeyProblem(path: path, problem: "cannot create it: \(POSIX.errorText())")) }
        let written = POSIX.writeAll(fd, Array(pem(key).utf8)) && fsync(fd) == 0
        POSIX.close(fd)
        guard written else {
            unlink(path)
            return .failure(ClientKeyProblem(path: path, problem: "cannot write it: \(POSIX.errorText())"))
        }
        let kid = key.thumbprint
        return .success((ClientKey.p256(key).publicJWK(kid: kid, alg: "ES256"), kid))
    }

    /// SEC 1's `ECPrivateKey` (RFC 5915) for a P-256 key, in PEM: a fixed DER frame (version 1, the
    /// 32-byte scalar, the prime256v1 OID, the uncompressed public point) around the key's numbers.
    static func pem(_ key: P256Key) -> String {
        let der: [UInt8] = [0x30, 0x77, 0x02, 0x01, 0x01, 0x04, 0x20] + key.privateScalar
            + [0xA0, 0x0A, 0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07, 0xA1, 0x44, 0x03, 0x42, 0x00, 0x04] + key.x + key.y
        var base64 = Base64URL.encode(der).replacing("-", with: "+").replacing("_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        var lines: [Substring] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN EC PRIVATE KEY-----\n" + lines.joined(separator: "\n") + "\n-----END EC PRIVATE KEY-----\n"
    }
}
