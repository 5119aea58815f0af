/// Where sessions are kept. `path` overrides `FileSessionStore.defaultDirectory`
/// (an absolute path when given); with `keyring` and `auto` it is where the
/// non-secret records and the locks live.
public enum StoreConfig: Sendable, Equatable {
    /// The keyring when one answers at start (within 1 s), else files with one warning.
    case auto(path: String?)
    /// Secrets in the OS keyring, records and locks in files; unavailable at start is a fatal error.
    case keyring(path: String?)
    /// Everything in one 0600 file per provider (surviving restarts, shared by the user's agents).
    case file(path: String?)
    /// Never written anywhere, lost on exit.
    case memory
}

/// The store in effect, as `status` reports it: which kind, and why when `auto`
/// fell back to files (so a plaintext fallback is never silent).
public struct StoreStatus: Sendable, Equatable {
    public enum Kind: String, Sendable { case keyring, file, memory }
    public let kind: Kind
    public let reason: String?

    public init(kind: Kind, reason: String? = nil) {
        self.kind = kind
        self.reason = reason
    }
}
