#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
import Locking

/// How this agent keeps in step with the other agent processes on the same
/// store: the per-provider lock, re-reading the store under it, noticing what
/// others changed (one `stat` per provider), and writing a session before
/// anyone hears of it.
final class StoreSync: Sendable {
    let store: SessionStore
    private let logger: Logger
    private let lockTimeout: Double
    /// Times the store lock's wait and the watch.
    private let clock: Clock
    private let events: @Sendable (AuthEvent) -> Void
    /// The store fingerprint last seen per record key.
    private let stamps = Locked<[String: String?]>([:])
    /// Record keys whose stored session could not be read because the keyring is
    /// locked or gone, with what it said: they answer 1010, not "not logged in".
    private let troubles = Locked<[String: String]>([:])
    /// Record keys whose stored session was issued by another issuer than the configuration
    /// names now, with that issuer: not used (`usable`), answered with a hint, and left in the store.
    private let foreign = Locked<[String: String]>([:])
    private let watcher = Locked<Ticker?>(nil)

    init(store: SessionStore, logger: Logger, lockTimeout: Double, clock: Clock, events: @escaping @Sendable (AuthEvent) -> Void) {
        self.store = store
        self.logger = logger
        self.lockTimeout = lockTimeout
        self.clock = clock
        self.events = events
    }

    /// A ticker runs until stopped, whoever still holds it: a service that goes away (many do
    /// in the tests) stops its watch here rather than leave a timer firing into nothing for the
    /// rest of the process.
    deinit {
        watcher.withLock { $0?.stop() }
    }

    /// A provider's accounts at start-up: a session written before accounts existed
    /// is first moved to its account's record (under the provider's lock; an account
    /// record already there wins), then every listed account is read. Unreadable
    /// records start logged out with a warning; a keyring in trouble is read again
    /// at the next check.
    func load(_ p: ProviderAccounts) {
        migrateLegacySession(p)
        let indexStamp = store.indexStamp(p.id)
        let index = (try? store.loadIndex(p.id)) ?? nil
        stamps.withLock { $0[StoreKeys.index(of: p.id)] = indexStamp }
        p.index = index ?? AccountIndex()
        for account in p.index.accounts {
            let c = p.session(account)
            let stamp = store.modificationStamp(c.key)
            do {
                if let session = usable(try loadQuietly(c.key), for: c) { c.install(login: session) }
            } catch {
                continue
            }
            stamps.withLock { $0[c.key] = stamp }
        }
    }

    /// Moves a pre-accounts session (kept under the provider's own key) to its account.
    private func migrateLegacySession(_ p: ProviderAccounts) {
        guard store.modificationStamp(p.id) != nil else { return }
        do {
            try store.withLock(p.id, timeout: min(lockTimeout, 5)) {
                guard var legacy = try store.load(p.id) else { return }
                let account = legacy.account ?? AccountIdentity.of(user: legacy.user)
                let key = StoreKeys.account(account, of: p.id)
                if try store.load(key) == nil {
                    legacy.account = account
                    try store.save(legacy, for: key)
                }
                var index = try store.loadIndex(p.id) ?? AccountIndex()
                index.add(account)
                try store.saveIndex(index, for: p.id)
                try store.remove(p.id)
                logger.info("moved the session of \(p.id) to its account \(account)")
            }
        } catch {
            logger.warn("could not move the session of \(p.id) to its account (tried again at the next start): \(error)")
        }
    }

    /// What the keyring said when one of the provider's sessions could not be read, if it could not.
    func trouble(_ p: ProviderAccounts) -> String? {
        let keys = p.all.map(\.key)
        let all = troubles.current
        return keys.compactMap { all[$0] }.first
    }

    func trouble(_ c: AccountSession) -> String? { troubles.withLock { $0[c.key] } }

    /// The issuer of `c`'s stored session when it is not the one the configuration names (see `usable`).
    func foreignIssuer(_ c: AccountSession) -> String? { foreign.withLock { $0[c.key] } }

    /// An account of `p` whose stored session another issuer issued — `account`'s, when one is named — with that issuer.
    func foreignSession(_ p: ProviderAccounts, account: String? = nil) -> (AccountSession, String)? {
        let all = foreign.current
        return p.all.filter { account == nil || $0.account == account }.lazy.compactMap { c in all[c.key].map { (c, $0) } }.first
    }

    /// `stored`, unless it was issued by another issuer than `c`'s configuration names (the
    /// configuration changed since its login): such a session is not this provider's — its tokens
    /// must not reach the new issuer's origins — so it is not used, and noted for the answer
    /// "log in again". It stays in the store untouched: another agent may still run the old
    /// configuration, and only a login (which replaces it) or a logout (which removes it) may end it.
    private func usable(_ stored: Session?, for c: AccountSession) -> Session? {
        let other = stored?.issuerProblem(c.config)
        let noted = foreign.withLock { foreign in
            defer { foreign[c.key] = other }
            return foreign[c.key]
        }
        guard let other else { return stored }
        if noted != other {
            logger.warn("the stored session of \(c.id) (\(c.account)) was issued by \(other), which the configuration no longer names: "
                        + "not used; log in again (it is kept until then)")
        }
        return nil
    }

    /// Removes the stored sessions of `p` that another issuer issued (`account`'s alone, when one is
    /// named): a logout, the explicit act that may end them (call holding the provider's lock).
    /// Returns what was removed — the account, the session as stored and its issuer — for the
    /// caller to revoke where it came from.
    func removeForeign(_ p: ProviderAccounts, account: String? = nil) -> [(account: String, session: Session?, issuer: String)] {
        var removed: [(account: String, session: Session?, issuer: String)] = []
        while let (c, issuer) = foreignSession(p, account: account) {
            let stored = try? store.load(c.key)
            persist(c, nil)
            foreign.withLock { $0[c.key] = nil }
            removed.append((c.account, stored, issuer))
        }
        if !removed.isEmpty { try? updateIndex(p) { index in removed.forEach { index.remove($0.account) } } }
        return removed
    }

    /// The stored session's generation, for numbering a new login after it.
    func storedGeneration(_ c: AccountSession) -> Int? { (try? store.load(c.key))?.generation }

    /// Takes the provider's store lock, shared with other agent processes; it covers
    /// every account of the provider and its account list. Only a lock held
    /// elsewhere means "busy"; a lock that cannot be taken at all (a planted
    /// symlink, an unwritable directory) is a store problem, and said so.
    func lock(_ config: ProviderConfig) async throws(AuthError) -> StoreLock {
        do {
            return try await store.lock(config.id, timeout: lockTimeout, clock: clock)
        } catch SessionStoreError.lockTimeout, is CancellationError {
            throw AuthError.anotherAgentBusy(config)
        } catch {
            logger.error("cannot lock the session of \(config.id): \(error)")
            throw AuthError.storeUnavailable(config, error)
        }
    }

    /// Adopts whatever another agent process saved for this account (call it
    /// holding the lock); returns the session now current, nil when logged out.
    /// A keyring in trouble changes nothing and is 1010.
    func adopt(_ c: AccountSession) throws(AuthError) -> Session? {
        let stamp = store.modificationStamp(c.key)
        do {
            try reconcile(c)
        } catch {
            throw AuthError.keyringUnavailable(c.config, error.reason)
        }
        stamps.withLock { $0[c.key] = stamp }
        return c.current
    }

    /// Picks up a login, logout or refresh another agent made, if the store changed.
    /// Reads under the store lock, so it never sees a write half-done in memory; when
    /// someone holds the lock it tries again next time (the change is not marked seen) —
    /// unless `evenIfBusy`: with no session in memory there is nothing a read could undo.
    func check(_ c: AccountSession, evenIfBusy: Bool = false) {
        let stamp = store.modificationStamp(c.key)
        guard stamps.withLock({ $0[c.key] != .some(stamp) }) else { return }
        let held = try? store.tryLock(c.id)
        guard held != nil || evenIfBusy else { return }
        defer { held?.unlock() }
        // A keyring in trouble keeps what is in memory; the change is read again next time.
        guard (try? reconcile(c)) != nil else { return }
        stamps.withLock { $0[c.key] = stamp }
    }

    /// `check` for the provider's account list (accounts another agent added or
    /// removed, a new default), then for every account.
    func check(_ p: ProviderAccounts, evenIfBusy: Bool = false) {
        let key = StoreKeys.index(of: p.id)
        let stamp = store.indexStamp(p.id)
        if stamps.withLock({ $0[key] != .some(stamp) }) {
            let held = try? store.tryLock(p.id)
            if held != nil || evenIfBusy, let index = try? store.loadIndex(p.id) ?? AccountIndex() {
                p.index = index
                for account in index.accounts { _ = p.session(account) }
                stamps.withLock { $0[key] = stamp }
            }
            held?.unlock()
        }
        for c in p.all { check(c, evenIfBusy: evenIfBusy && !c.isLoggedIn) }
    }

    /// Before answering "not logged in", look at the store once: another agent
    /// may have logged in since the last periodic check.
    func catchUp(_ p: ProviderAccounts) {
        check(p, evenIfBusy: true)
    }

    /// Runs `check` for every provider `providers` lists (asked each time: learned providers
    /// come and go) now and every `interval` seconds of the clock, for the life of this object.
    func watch(every interval: Double, _ providers: @escaping @Sendable () -> [ProviderAccounts]) {
        let ticker = clock.every(interval) { [weak self] in
            guard let self else { return }
            providers().forEach { self.check($0) }
        }
        watcher.withLock { $0 = ticker }
    }

    /// Writes (or, for `nil`, removes) the account's stored session; a failure is logged, then thrown.
    func save(_ c: AccountSession, _ session: Session?) throws {
        do {
            if let session { try store.save(session, for: c.key) } else { try store.remove(c.key) }
            foreign.withLock { $0[c.key] = nil }  // what this process writes is its configuration's
        } catch {
            logger.error("could not write the session of \(c.id) (\(c.account)) to the store: \(error)")
            throw error
        }
    }

    /// `save` for logouts and expiries, which happen whether or not the store takes them.
    func persist(_ c: AccountSession, _ session: Session?) {
        try? save(c, session)
    }

    /// Changes the provider's stored account list (call holding the provider's lock):
    /// re-read first, so another agent's change is kept.
    func updateIndex(_ p: ProviderAccounts, _ change: (inout AccountIndex) -> Void) throws {
        // No list stored: another agent logged every account out. An unreadable one: what this agent knows.
        let stored: AccountIndex?
        do { stored = try store.loadIndex(p.id) } catch { stored = p.index }
        var index = stored ?? AccountIndex()
        change(&index)
        if index != stored { try store.saveIndex(index, for: p.id) }
        p.index = index
        stamps.withLock { $0[StoreKeys.index(of: p.id)] = store.indexStamp(p.id) }
    }

    /// Counts a refresh of `c`'s token of `shape` about to be sent (call holding the provider's
    /// lock) in the stored account list, where every agent process on the store counts its own;
    /// 1007 when it would exceed the `RefreshLimit`. A list that cannot be written is logged and
    /// does not stop the refresh.
    func admitRefresh(_ p: ProviderAccounts, _ c: AccountSession, shape: TokenShape, now: Date) throws(AuthError) {
        var exceeded: RefreshLimit.Exceeded?
        do {
            try updateIndex(p) { exceeded = $0.admitRefresh(of: c.account, shape: shape, at: now) }
        } catch {
            logger.warn("could not count the refresh of \(c.id) (\(c.account)) in the store: \(error)")
        }
        if let exceeded { throw AuthError.excessiveRefresh(c.config, account: c.account, exceeded) }
    }

    /// Call holding the store lock.
    private func reconcile(_ c: AccountSession) throws(KeyringTrouble) {
        if let event = c.reconcile(with: usable(try loadQuietly(c.key), for: c)) {
            logger.info("\(c.id) (\(c.account)) was changed by another agent (\(event.name.rawValue))")
            events(event)
        }
    }

    struct KeyringTrouble: Error { let reason: String }

    /// The stored session; nil (with a warning) when it is unreadable. Throws only
    /// when the keyring is unavailable: then the session in memory is kept as it is.
    private func loadQuietly(_ key: String) throws(KeyringTrouble) -> Session? {
        let name = StoreKeys.provider(of: key)
        do {
            let session = try store.load(key)
            troubles.withLock { $0[key] = nil }
            return session
        } catch SessionStoreError.unavailable(let why) {
            if troubles.withLock({ $0.updateValue(why, forKey: key) }) != why {
                logger.warn("could not read the stored session of \(name): the keyring: \(why)")
            }
            throw KeyringTrouble(reason: why)
        } catch {
            logger.warn("could not read the stored session of \(name): \(error)")
            return nil
        }
    }
}
