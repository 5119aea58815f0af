#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// Where sessions live between runs, and the lock that keeps two refreshers
/// (threads or agent processes) from spending the same refresh token twice.
///
/// Synchronous on purpose: every operation is a small local file or dictionary
/// access; the lock (`tryLock`, `lock`, `withLock`) must hold across the caller's whole read-refresh-write.
public protocol SessionStore: Sendable {
    /// The saved session, or `nil` when logged out (or the record was unreadable).
    func load(_ provider: String) throws -> Session?
    /// Replaces the saved session atomically.
    func save(_ session: Session, for provider: String) throws
    /// Forgets the session; not an error when there is none.
    func remove(_ provider: String) throws
    /// One attempt, without waiting, at the provider's exclusive lock; nil when
    /// someone (a thread or another agent process) holds it. Not re-entrant.
    func tryLock(_ provider: String) throws -> StoreLock?
    /// A cheap fingerprint of the provider's saved record that changes whenever
    /// any process saves or removes it; nil when there is none.
    func modificationStamp(_ provider: String) -> String?
    /// The provider's account list, nil when none was saved.
    func loadIndex(_ provider: String) throws -> AccountIndex?
    /// Replaces the provider's account list atomically; an empty list removes it.
    func saveIndex(_ index: AccountIndex, for provider: String) throws
    /// `modificationStamp` of the account list.
    func indexStamp(_ provider: String) -> String?
    /// A small non-secret document kept beside the sessions (the APIs the agent learned,
    /// `StoreKeys.learned`), nil when none; `nil` bytes to `saveDocument` remove it.
    func loadDocument(_ key: String) throws -> [UInt8]?
    func saveDocument(_ bytes: [UInt8]?, key: String) throws
    /// `modificationStamp` of a document.
    func documentStamp(_ key: String) -> String?
    /// One attempt, without waiting, at the interactive-login lock `name` (a provider's id, or a
    /// learning's), shared by every agent process on the store; nil when someone holds it.
    /// Separate from `tryLock`, which the login itself takes to save its session.
    func tryLoginLock(_ name: String) throws -> StoreLock?
}

/// A held provider lock; released explicitly or, at the latest, when dropped.
public final class StoreLock: @unchecked Sendable {
    private let lock = Lock()
    private var release: (() -> Void)?

    init(release: @escaping () -> Void) { self.release = release }

    public func unlock() {
        lock.lock()
        let action = release
        release = nil
        lock.unlock()
        action?()
    }

    deinit { unlock() }
}

extension SessionStore {
    /// A store without documents (a test's): nothing learned survives the process.
    public func loadDocument(_ key: String) throws -> [UInt8]? { nil }
    public func saveDocument(_ bytes: [UInt8]?, key: String) throws { throw SessionStoreError.io("this store keeps no documents") }
    public func documentStamp(_ key: String) -> String? { nil }

    /// A store that says nothing of other processes (a test's): logins exclude each other in this process.
    public func tryLoginLock(_ name: String) throws -> StoreLock? {
        guard processLoginLocks.tryAcquire(name) else { return nil }
        return StoreLock { processLoginLocks.release(name) }
    }

    /// Waits at most `timeout` seconds of `clock`'s time for the provider's lock without
    /// blocking a thread (then `SessionStoreError.lockTimeout`): the store lock is waited for by
    /// polling `tryLock`, as another process may hold it and no store can say when it is freed.
    public func lock(_ provider: String, timeout: Double, clock: Clock) async throws -> StoreLock {
        guard let held = try await clock.poll(until: clock.deadline(after: timeout), { try tryLock(provider) }) else {
            throw SessionStoreError.lockTimeout(provider: provider)
        }
        return held
    }

    /// Runs `body` holding the provider's lock, waiting at most `timeout` seconds
    /// for it (then `SessionStoreError.lockTimeout`); blocks the calling thread
    /// (`ThreadWait`), for the synchronous start-up of a service or a keyring store.
    public func withLock<T>(_ provider: String, timeout: Double, _ body: () throws -> T) throws -> T {
        guard let held = try ThreadWait().wait(timeout: timeout, until: { try tryLock(provider) }) else {
            throw SessionStoreError.lockTimeout(provider: provider)
        }
        defer { held.unlock() }
        return try body()
    }
}

/// The interactive-login locks of stores that keep none of their own.
private let processLoginLocks = InProcessLocks()
