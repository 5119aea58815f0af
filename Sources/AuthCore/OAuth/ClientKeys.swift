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

/// The client keys read so far, by path: a key file is read (and libcrypto loaded) once per process.
enum ClientKeys {
    private static let loaded = Locked<[String: ClientKey]>([:])

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

/// Why a client key file cannot be used; says nothing of the key's contents.
struct ClientKeyProblem: Error, Sendable, CustomStringConvertible {
    let path: String
    let problem: String

    var description: String { "the client key \(path) cannot be used: \(problem)" }
}
