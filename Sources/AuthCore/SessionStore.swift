/// Where sessions live between runs, and the lock that keeps two refreshers
/// (threads or agent processes) from spending the same refresh token twice.
///
/// Synchronous on purpose: every operation is a small local file or dictionary
/// access, and `withLock` must hold across the caller's whole read-refresh-write.
public protocol SessionStore: Sendable {
    /// The saved session, or `nil` when logged out (or the record was unreadable).
    func load(_ provider: String) throws -> Session?
    /// Replaces the saved session atomically.
    func save(_ session: Session, for provider: String) throws
    /// Forgets the session; not an error when there is none.
    func remove(_ provider: String) throws
    /// Runs `body` while holding the provider's exclusive lock, waiting at most
    /// `timeout` seconds for it (then `SessionStoreError.lockTimeout`). Not
    /// re-entrant: a nested call for the same provider waits for itself.
    func withLock<T>(_ provider: String, timeout: Double, _ body: () throws -> T) throws -> T
}
