import Foundation
import JSON
import JSONRPC

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
    private let watcher = Locked<DispatchSourceTimer?>(nil)

    init(store: SessionStore, logger: Logger, lockTimeout: Double, events: @escaping @Sendable (AuthEvent) -> Void) {
        self.store = store
        self.logger = logger
        self.lockTimeout = lockTimeout
        self.events = events
    }

    /// The stored session at start-up (nil, with a warning, when it cannot be read).
    func initialSession(_ id: String) -> Session? {
        defer { stamps.withLock { $0[id] = store.modificationStamp(id) } }
        return loadQuietly(id)
    }

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
    func adopt(_ c: SessionCoordinator) -> Session? {
        reconcile(c)
        stamps.withLock { $0[c.id] = store.modificationStamp(c.id) }
        return c.current
    }

    /// Picks up a login, logout or refresh another agent made, if the store changed.
    /// Reads under the store lock, so it never sees a write half-done in memory; when
    /// someone holds the lock it tries again next time (the change is not marked seen).
    func check(_ c: SessionCoordinator) {
        let id = c.id
        let stamp = store.modificationStamp(id)
        guard stamps.withLock({ $0[id] != .some(stamp) }), let held = try? store.tryLock(id) else { return }
        defer { held.unlock() }
        reconcile(c)
        stamps.withLock { $0[id] = stamp }
    }

    /// Before answering "not logged in", look at the store once: another agent
    /// may have logged in since the last periodic check.
    func catchUp(_ c: SessionCoordinator) -> (session: Session, authorization: String)? {
        check(c)
        return c.snapshot()
    }

    /// Runs `check` for every coordinator every `interval` seconds, for the life of this object.
    func watch(_ coordinators: [SessionCoordinator], every interval: Double) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
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
    private func reconcile(_ c: SessionCoordinator) {
        if let event = c.reconcile(with: loadQuietly(c.id)) {
            logger.info("\(c.id) was changed by another agent (\(event.name.rawValue))")
            events(event)
        }
    }

    private func loadQuietly(_ id: String) -> Session? {
        do {
            return try store.load(id)
        } catch {
            logger.warn("could not read the stored session of \(id): \(error)")
            return nil
        }
    }
}
