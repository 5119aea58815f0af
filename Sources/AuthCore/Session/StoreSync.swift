import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking

/// How this agent keeps in step with the other agent processes on the same
/// store: the per-provider lock, re-reading the store under it, noticing what
/// others changed (one `stat` per provider), and writing a session before
/// anyone hears of it.
final class StoreSync: Sendable {
    let store: SessionStore
    private let logger: Logger
    private let lockTimeout: Double
    private let events: @Sendable (AuthEvent) -> Void
    /// The store fingerprint last seen per provider.
    private let stamps = Locked<[String: String?]>([:])
    /// Providers whose stored session could not be read because the keyring is
    /// locked or gone, with what it said: they answer 1010, not "not logged in".
    private let troubles = Locked<[String: String]>([:])
    private let watcher = Locked<DispatchSourceTimer?>(nil)

    init(store: SessionStore, logger: Logger, lockTimeout: Double, events: @escaping @Sendable (AuthEvent) -> Void) {
        self.store = store
        self.logger = logger
        self.lockTimeout = lockTimeout
        self.events = events
    }

    /// The stored session at start-up (nil, with a warning, when it cannot be read;
    /// a keyring in trouble is read again at the next check).
    func initialSession(_ id: String) -> Session? {
        let stamp = store.modificationStamp(id)
        guard let session = try? loadQuietly(id) else { return nil }
        stamps.withLock { $0[id] = stamp }
        return session
    }

    /// What the keyring said when the provider's session could not be read, if it could not.
    func trouble(_ id: String) -> String? { troubles.withLock { $0[id] } }

    /// The stored session's generation, for numbering a new login after it.
    func storedGeneration(_ id: String) -> Int? { (try? store.load(id))?.generation }

    /// Takes the provider's store lock, shared with other agent processes. Only
    /// a lock held elsewhere means "busy"; a lock that cannot be taken at all
    /// (a planted symlink, an unwritable directory) is a store problem, and said so.
    func lock(_ c: SessionCoordinator) async throws(AuthError) -> StoreLock {
        do {
            return try await store.lock(c.id, timeout: lockTimeout)
        } catch SessionStoreError.lockTimeout, is CancellationError {
            throw AuthError(.authServerUnavailable, "Another auth-agent is busy with \(c.config.displayName); try again.", provider: c.id)
        } catch {
            logger.error("cannot lock the session of \(c.id): \(error)")
            throw AuthError.storeUnavailable(c.config, error)
        }
    }

    /// Adopts whatever another agent process saved for this provider (call it
    /// holding the lock); returns the session now current, nil when logged out.
    /// A keyring in trouble changes nothing and is 1010.
    func adopt(_ c: SessionCoordinator) throws(AuthError) -> Session? {
        let stamp = store.modificationStamp(c.id)
        do {
            try reconcile(c)
        } catch {
            throw Self.unavailable(c, error.reason)
        }
        stamps.withLock { $0[c.id] = stamp }
        return c.current
    }

    static func unavailable(_ c: SessionCoordinator, _ why: String) -> AuthError {
        AuthError(.storeUnavailable, "The keyring holding the \(c.config.displayName) session is unavailable: \(why).", provider: c.id)
    }

    /// Picks up a login, logout or refresh another agent made, if the store changed.
    /// Reads under the store lock, so it never sees a write half-done in memory; when
    /// someone holds the lock it tries again next time (the change is not marked seen) —
    /// unless `evenIfBusy`: with no session in memory there is nothing a read could undo.
    func check(_ c: SessionCoordinator, evenIfBusy: Bool = false) {
        let id = c.id
        let stamp = store.modificationStamp(id)
        guard stamps.withLock({ $0[id] != .some(stamp) }) else { return }
        let held = try? store.tryLock(id)
        guard held != nil || evenIfBusy else { return }
        defer { held?.unlock() }
        // A keyring in trouble keeps what is in memory; the change is read again next time.
        guard (try? reconcile(c)) != nil else { return }
        stamps.withLock { $0[id] = stamp }
    }

    /// Before answering "not logged in", look at the store once: another agent
    /// may have logged in since the last periodic check.
    func catchUp(_ c: SessionCoordinator) -> SessionCoordinator.Snapshot? {
        check(c, evenIfBusy: c.current == nil)
        return c.snapshot()
    }

    /// Runs `check` for every coordinator now and every `interval` seconds, for the life of this object.
    func watch(_ coordinators: [SessionCoordinator], every interval: Double) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in coordinators.forEach { self?.check($0) } }
        timer.resume()
        watcher.withLock { $0 = timer }
    }

    /// Writes (or, for `nil`, removes) the stored session; a failure is logged, then thrown.
    func save(_ id: String, _ session: Session?) throws {
        do {
            if let session { try store.save(session, for: id) } else { try store.remove(id) }
        } catch {
            logger.error("could not write the session of \(id) to the store: \(error)")
            throw error
        }
    }

    /// `save` for logouts and expiries, which happen whether or not the store takes them.
    func persist(_ id: String, _ session: Session?) {
        try? save(id, session)
    }

    /// Call holding the store lock.
    private func reconcile(_ c: SessionCoordinator) throws(KeyringTrouble) {
        if let event = c.reconcile(with: try loadQuietly(c.id)) {
            logger.info("\(c.id) was changed by another agent (\(event.name.rawValue))")
            events(event)
        }
    }

    struct KeyringTrouble: Error { let reason: String }

    /// The stored session; nil (with a warning) when it is unreadable. Throws only
    /// when the keyring is unavailable: then the session in memory is kept as it is.
    private func loadQuietly(_ id: String) throws(KeyringTrouble) -> Session? {
        do {
            let session = try store.load(id)
            troubles.withLock { $0[id] = nil }
            return session
        } catch SessionStoreError.unavailable(let why) {
            if troubles.withLock({ $0.updateValue(why, forKey: id) }) != why {
                logger.warn("could not read the stored session of \(id): the keyring: \(why)")
            }
            throw KeyringTrouble(reason: why)
        } catch {
            logger.warn("could not read the stored session of \(id): \(error)")
            return nil
        }
    }
}
