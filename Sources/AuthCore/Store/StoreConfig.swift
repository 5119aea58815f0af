/// Where sessions are kept. `path` overrides `FileSessionStore.defaultDirectory`
/// (an absolute path when given); with `keyring` and `auto` it is where the
/// non-secret records and the locks live.
public enum StoreConfig: Sendable, Equatable {
    /// Each login's tokens in the keyring if one answers then (within 1 s), else
    /// in files with one warning; a read follows the record (see `KeyringAccess`).
    case auto(path: String?)
    /// Secrets in the OS keyring, records and locks in files; unavailable at start is a fatal error.
    case keyring(path: String?)
    /// Everything in one 0600 file per provider (surviving restarts, shared by the user's agents).
    case file(path: String?)
    /// Never written anywhere, lost on exit.
    case memory
}

/// The store in effect, as `status` reports it: which kind, and why when `auto`
/// keeps tokens in files (so a plaintext fallback is never silent). `auto`:
/// nothing stored yet, so nothing decided.
public struct StoreStatus: Sendable, Equatable {
    public enum Kind: String, Sendable { case keyring, file, memory, auto }
    public let kind: Kind
    public let reason: String?

    public init(kind: Kind, reason: String? = nil) {
        self.kind = kind
        self.reason = reason
    }
}

/// A store whose kind in effect is known from what it read and wrote (`auto`'s
/// choice is made per login and kept in each record), so `status` asks it.
public protocol StoreStatusReporting: Sendable {
    var storeStatus: StoreStatus { get }
}
