import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking

/// The one place where the current users and tokens live: login, logout,
/// signing, refresh and status for every configured provider, over an
/// injected store, HTTP transport and clock. Knows nothing of stdio or
/// JSON-RPC framing; `AuthMethods` binds it to the protocol.
public final class AuthService: Sendable {
    public let config: AgentConfig
    private let states: [String: ProviderState]
    private let order: [String]
    private let matcher: OriginMatcher
    private let store: SessionStore
    /// For `fetch`'s API calls; auth-server calls go through `HTTPCalls`.
    let transport: HTTPTransport
    private let clock: Clock
    private let logger: Logger
    private let events: @Sendable (AuthEvent) -> Void
    private let lockTimeout: Double
    private let httpTimeout: Double
    private let timing: RefreshTiming
    /// Set when the process is about to exit: no refresh starts any more.
    private let shuttingDown = Locked(false)
    /// The store fingerprint last seen per provider, for `checkStore`.
    private let stamps = Locked<[String: String?]>([:])
    private let watcher = Locked<DispatchSourceTimer?>(nil)
    private let origins = OriginCache()

    /// Seconds a logout may spend telling the server; the local session is gone either way.
    static let revokeTimeout = 5.0

    /// - Parameter lockTimeout: how long to wait for another agent process that
    ///   holds a provider's store lock (then 1005, retryable).
    public init(config: AgentConfig, store: SessionStore, transport: HTTPTransport, clock: Clock = SystemClock(),
                logger: Logger, httpTimeout: Double = 10, lockTimeout: Double = 15,
                events: @escaping @Sendable (AuthEvent) -> Void)
    {
        self.config = config
        self.lockTimeout = lockTimeout
        self.httpTimeout = httpTimeout
        self.timing = config.refreshTiming
        self.store = store
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.events = events
        let http = HTTPCalls(transport: transport, timeout: httpTimeout)
        let discovery = Discovery(http: http)
        var states: [String: ProviderState] = [:]
        for p in config.providers {
            let oauth = OAuthClient(config: p, http: http, clock: clock, discovery: discovery,
                                    lifetimeWarning: WarnOnce { logger.warn($0) })
            let provider = p.flow.descriptor.makeProvider(FlowContext(config: p, http: http, oauth: oauth, clock: clock,
                                                                      revokeTimeout: Self.revokeTimeout, browser: BrowserLauncher()))
            var session: Session?
            do {
                session = try store.load(p.id)
            } catch {
                logger.warn("could not read the stored session of \(p.id): \(error)")
            }
            stamps.withLock { $0[p.id] = store.modificationStamp(p.id) }
            states[p.id] = ProviderState(config: p, provider: provider, session: session)
        }
        self.states = states
        self.order = config.providers.map(\.id)
        self.matcher = OriginMatcher(config.providers.map { (provider: $0.id, origins: $0.origins) })
    }

    // MARK: Lookups

    private func state(_ id: String) throws(AuthError) -> ProviderState {
        guard let s = states[id] else {
            throw AuthError(.unknownProvider, "No provider \"\(id)\" is configured; known: \(order.joined(separator: ", ")).", provider: id)
        }
        return s
    }

    private func notLoggedIn(_ s: ProviderState) -> AuthError {
        AuthError(.notLoggedIn, "Not logged in to \(s.config.displayName).", provider: s.id)
    }

    // MARK: status

    public func status(providers filter: Set<String>? = nil) -> JSONValue {
        var list: [JSONValue] = []
        for id in order where filter?.contains(id) ?? true {
            let s = states[id]!
            var entry: JSONObject = [
                "id": .string(id), "displayName": .string(s.config.displayName), "flow": .string(s.config.flow.rawValue),
                "fields": .array(s.config.flow.descriptor.fields.map(\.json)),
            ]
            if let session = s.current {
                entry["state"] = "loggedIn"
                entry["user"] = session.user ?? [:]
                entry["expiresAt"] = RFC3339.json(session.expiresAt)
            } else {
                entry["state"] = "loggedOut"
            }
            list.append(.object(entry))
        }
        return ["providers": .array(list)]
    }

    public func knows(_ provider: String) -> Bool { states[provider] != nil }

    // MARK: login / logout

    /// Starts a login: the provider is marked as changing at once (so later
    /// requests for it wait until its answer is out), and the returned work performs it.
    public func beginLogin(provider id: String, credentials: Credentials?, context: LoginContext = LoginContext()) throws(AuthError) -> Work {
        let s = try state(id)
        let change = s.beginChange()
        return Work(run: { [self] in
            for earlier in change.previous { await earlier.wait() }
            return try await login(s, credentials: credentials, context: context)
        }, answered: { s.endChange(change.mine) })
    }

    /// Starts a logout, ordered like `beginLogin`.
    public func beginLogout(provider id: String) throws(AuthError) -> Work {
        let s = try state(id)
        let change = s.beginChange()
        return Work(run: { [self] in
            for earlier in change.previous { await earlier.wait() }
            return await logout(s)
        }, answered: { s.endChange(change.mine) })
    }

    private func login(_ s: ProviderState, credentials: Credentials?, context: LoginContext) async throws(AuthError) -> JSONValue {
        let id = s.id
        let fresh = try await s.provider.login(credentials, context: context)
        let held = try await lockStore(s)
        defer { held.unlock() }
        let stored = try? store.load(id)
        var session = fresh
        session.generation = max(stored?.generation ?? 0, s.current?.generation ?? 0) + 1
        // A login that is not saved would be lost with this process: fail it, and install nothing.
        do {
            try s.replace(with: session) { try save(id, $0) }
        } catch {
            throw AuthError.storeUnavailable(s.config, error)
        }
        logger.info("logged in to \(id)")
        let user = session.user ?? [:]
        events(.loggedIn(provider: id, user: user, expiresAt: session.expiresAt))
        return ["provider": .string(id), "user": user, "expiresAt": RFC3339.json(session.expiresAt)]
    }

    private func logout(_ s: ProviderState) async -> JSONValue {
        let id = s.id
        // The user asked to be logged out: if another agent holds the lock too long, log out anyway.
        let held = try? await lockStore(s)
        defer { held?.unlock() }
        guard let session = s.take(persist: { persist(id, nil) }) else { return ["revoked": false] }
        logger.info("logged out of \(id)")
        events(.loggedOut(provider: id, reason: .logout))
        let revoked = await s.provider.revoke(session)
        return ["revoked": .bool(revoked)]
    }

    // MARK: sign / token / refresh

    /// The provider a request goes to, or nil when no provider covers its origin.
    func route(url: String, provider explicit: String?) throws(AuthError) -> ProviderState? {
        let origin = origins.origin(of: url)
        // A token is only ever attached over https, or to loopback.
        let covering = origin.flatMap { $0.isSecureForBearer ? matcher.provider(for: $0) : nil }
        if let explicit {
            let s = try state(explicit)
            guard covering == explicit else {
                throw AuthError(.originNotAllowed, "Provider \(explicit) does not cover \(origin?.description ?? "that URL").", provider: explicit)
            }
            return s
        }
        return covering.flatMap { states[$0] }
    }

    /// A request no provider covers needs no auth: pass it through as is.
    static let unsignedText = JSONText(["signed": false, "headers": [:]])

    /// What a request needs next: an answer now, or work that waits (for a
    /// login or logout of the same provider begun earlier, or for the network).
    public enum Step: Sendable {
        case ready(JSONText)
        case wait(Work)
    }

    /// `sign`: answered from memory when the token is fresh and nothing is changing.
    public func beginSign(url: String, provider: String?) throws(AuthError) -> Step {
        guard let s = try route(url: url, provider: provider) else { return .ready(Self.unsignedText) }
        if s.pendingChange() == nil {
            guard let (session, result) = s.snapshot() ?? catchUp(s) else { throw notLoggedIn(s) }
            switch timing.freshness(of: session, at: clock.now()) {
            case .fresh: return .ready(result)
            case .stale:
                refreshInBackground(s, session)
                return .ready(result)
            case .expired: break
            }
        }
        let read = s.beginRead()
        return .wait(Work(run: { [self] () async throws -> JSONValue in
            await read.previous?.wait()
            _ = try await usableSession(s)
            guard let result = s.signAnswer else { throw notLoggedIn(s) }
            return result
        }, answered: read.mine.open))
    }

    /// `token`: the session's access token, refreshed first when needed.
    public func beginToken(provider id: String) throws(AuthError) -> Work {
        let s = try state(id)
        let read = s.beginRead()
        return Work(run: { [self] () async throws -> JSONValue in
            await read.previous?.wait()
            let session = try await usableSession(s)
            return ["accessToken": .string(session.accessToken), "tokenType": .string(session.tokenType), "expiresAt": RFC3339.json(session.expiresAt)]
        }, answered: read.mine.open)
    }

    /// `refresh` after a 401: refresh unless the rejected authorization is no longer the current one.
    public func beginRefresh(provider id: String, failedAuthorization: String?) throws(AuthError) -> Work {
        let s = try state(id)
        let read = s.beginRead()
        return Work(run: { [self] () async throws -> JSONValue in
            await read.previous?.wait()
            return try await refresh(s, failedAuthorization: failedAuthorization)
        }, answered: read.mine.open)
    }

    private func refresh(_ s: ProviderState, failedAuthorization: String?) async throws(AuthError) -> JSONValue {
        let (session, refreshed) = try await sessionAfterRejection(s, failedAuthorization: failedAuthorization)
        return ["provider": .string(s.id), "refreshed": .bool(refreshed), "expiresAt": RFC3339.json(session.expiresAt)]
    }

    /// The `refresh` rule, once for `refresh` and `fetch`: the session to use after the
    /// server rejected `failedAuthorization` (nil: the current one), and whether a refresh
    /// happened. Nothing is sent when that token was already replaced.
    func sessionAfterRejection(_ s: ProviderState, failedAuthorization: String?) async throws(AuthError) -> (Session, Bool) {
        guard let session = s.current ?? catchUp(s)?.0 else { throw notLoggedIn(s) }
        if let failed = failedAuthorization, failed != session.authorization, failed != session.accessToken {
            return (session, false)
        }
        guard canRefresh(s, session) else {
            // The server rejected the current token and there is no way to get another.
            return (try await expireUnlessReplaced(s, session, why: "the server no longer accepts the token"), false)
        }
        return try await refresh(s, stale: session)
    }

    private func canRefresh(_ s: ProviderState, _ session: Session) -> Bool {
        s.config.flow.descriptor.canRefresh(s.config, session)
    }

    /// The session to use now. A stale token is used while a refresh runs in the
    /// background; an expired (or nearly expired) one is refreshed first — and if
    /// that refresh fails for a passing reason while the token is still valid, the
    /// token is used anyway: never an error while a valid token exists.
    func usableSession(_ s: ProviderState) async throws(AuthError) -> Session {
        guard let session = s.current ?? catchUp(s)?.0 else { throw notLoggedIn(s) }
        switch timing.freshness(of: session, at: clock.now()) {
        case .fresh: return session
        case .stale:
            refreshInBackground(s, session)
            return session
        case .expired: break
        }
        guard canRefresh(s, session) else {
            if RefreshTiming.isValid(session, at: clock.now()) { return session }  // no way to refresh: use it while it lasts
            return try await expireUnlessReplaced(s, session, why: "the session has expired")
        }
        do {
            return try await refresh(s, stale: session).0
        } catch where error.code != .sessionExpired {
            // The server, the store or the refresh limit failed, not the session: a token that is
            // still valid (the old one, or a new one that could not be saved) is used meanwhile.
            guard let current = s.current, RefreshTiming.isValid(current, at: clock.now()) else { throw error }
            return current
        }
    }

    /// Starts a refresh of a stale token that nobody waits for. A passing failure
    /// delays the next attempt (backoff with jitter); the token stays in use.
    private func refreshInBackground(_ s: ProviderState, _ stale: Session) {
        guard canRefresh(s, stale), !shuttingDown.current, s.claimBackgroundRefresh(of: stale, now: clock.now()) else { return }
        Task { [self] in
            do throws(AuthError) {
                _ = try await refresh(s, stale: stale)
                s.backgroundRefreshEnded(failed: false, now: clock.now())
            } catch {
                s.backgroundRefreshEnded(failed: true, now: clock.now())
                // A rejected session was already ended (and announced) by the refresh itself.
                if error.code != .sessionExpired { logger.warn("background refresh of \(s.id) failed: \(error.message) The current token stays in use.") }
            }
        }
    }

    /// Shutdown: no refresh starts from now on, and refreshes already under way
    /// are waited for — at most `httpTimeout` and a little for the write — so that a
    /// refresh token the server already rotated is persisted before the process exits.
    /// Blocks the calling thread; returns false when it gave up waiting.
    @discardableResult
    public func finishRefreshes() -> Bool {
        shuttingDown.withLock { $0 = true }
        let tasks = order.compactMap { states[$0]!.refreshInFlight }
        guard !tasks.isEmpty else { return true }
        let done = DispatchSemaphore(value: 0)
        Task {
            for task in tasks { _ = try? await task.value }
            done.signal()
        }
        return done.wait(timeout: .now() + httpTimeout + 2) == .success
    }

    /// Single-flight refresh of `stale`; returns the session to use and whether a refresh happened.
    private func refresh(_ s: ProviderState, stale: Session) async throws(AuthError) -> (Session, Bool) {
        let id = s.id
        let start = s.beginRefresh(of: stale, mayStart: !shuttingDown.current) { [self] () async throws -> Session in
            try await performRefresh(s, stale: stale)
        }
        let task: Task<Session, Error>
        switch start {
        case .alreadyFresh(let current): return (current, false)
        case .loggedOut: throw notLoggedIn(s)
        case .refused: throw AuthError.unavailable(s.config, "auth-agent is shutting down")
        case .joined(let t), .started(let t): task = t
        }
        do {
            return (try await task.value, true)
        } catch let e as AuthError {
            throw e
        } catch {
            throw AuthError(.authServerUnavailable, "\(s.config.displayName) is unavailable.", provider: id)
        }
    }

    /// One refresh, serialised with every other agent process on the same store:
    /// under the provider's lock, re-read the store first — if another agent
    /// already refreshed (or logged out), use that and send nothing.
    private func performRefresh(_ s: ProviderState, stale: Session) async throws -> Session {
        let id = s.id
        let held = try await lockStore(s)
        defer { held.unlock() }
        if let current = try adoptStored(s), !current.sameTokens(as: stale) { return current }
        // A refresh that got the lock after shutdown began has sent nothing yet: it must not start now.
        guard !shuttingDown.current else { throw AuthError.unavailable(s.config, "auth-agent is shutting down") }
        guard s.admitRefresh(now: clock.now()) else {
            throw AuthError(.excessiveRefresh, "\(s.config.displayName) was refreshed \(ProviderState.refreshLimit) times within \(Int(ProviderState.refreshLimitWindow)) s; not calling the server again yet.", provider: id)
        }
        switch await s.provider.refresh(stale) {
        case .refreshed(var fresh):
            fresh.generation = stale.generation + 1
            // Persist before anything else: the server may already have retired the old refresh token.
            // If the store refuses, the fresh session is still installed (the old one may be dead at the
            // server), but the caller hears that it was not saved.
            var unsaved: Error?
            let installed = s.complete(refreshOf: stale, with: fresh) { session in
                do { try save(id, session) } catch { unsaved = error }
            }
            guard installed else { return s.current ?? fresh }
            logger.info("refreshed \(id)")
            events(.tokenRefreshed(provider: id, expiresAt: fresh.expiresAt))
            if let unsaved { throw AuthError.storeUnavailable(s.config, unsaved) }
            return fresh
        case .rejected(let why):
            // Before declaring the session dead, look again: newer tokens in the store win.
            if let current = try adoptStored(s), !current.sameTokens(as: stale) { return current }
            throw expire(s, stale, why: "the server rejected the refresh (\(why))")
        case .transient(let why):
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.unavailable(s.config, why)
        case .malformed(let why):
            // Retrying would get the same answer, but the session did nothing wrong: keep it.
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.malformedResponse(s.config, why)
        case .unsupported:
            throw expire(s, stale, why: "the session cannot be refreshed")
        }
    }

    /// Takes the provider's store lock, shared with other agent processes. Only
    /// a lock held elsewhere means "busy"; a lock that cannot be taken at all
    /// (a planted symlink, an unwritable directory) is a store problem, and said so.
    private func lockStore(_ s: ProviderState) async throws(AuthError) -> StoreLock {
        do {
            return try await store.lock(s.id, timeout: lockTimeout)
        } catch SessionStoreError.lockTimeout, is CancellationError {
            throw AuthError(.authServerUnavailable, "Another auth-agent is busy with \(s.config.displayName); try again.", provider: s.id)
        } catch {
            logger.error("cannot lock the session of \(s.id): \(error)")
            throw AuthError.storeUnavailable(s.config, error)
        }
    }

    /// Adopts whatever another agent process saved for this provider; the session now current.
    private func adoptStored(_ s: ProviderState) throws(AuthError) -> Session? {
        let id = s.id
        if let event = s.reconcile(load: { loadQuietly(id) }) {
            logger.info("\(id) was changed by another agent (\(event.name.rawValue))")
            events(event)
        }
        stamps.withLock { $0[id] = store.modificationStamp(id) }
        guard let current = s.current else { throw notLoggedIn(s) }
        return current
    }

    private func loadQuietly(_ id: String) -> Session? {
        do {
            return try store.load(id)
        } catch {
            logger.warn("could not read the stored session of \(id): \(error)")
            return nil
        }
    }

    /// Picks up logins, logouts and refreshes made by other agent processes on
    /// the same store. Cheap when nothing changed: one `stat` per provider.
    public func checkStore() {
        for id in order { check(states[id]!) }
    }

    private func check(_ s: ProviderState) {
        let id = s.id
        let stamp = store.modificationStamp(id)
        let changed = stamps.withLock { seen -> Bool in
            defer { seen[id] = stamp }
            return seen[id] != .some(stamp)
        }
        guard changed else { return }
        if let event = s.reconcile(load: { loadQuietly(id) }) {
            logger.info("\(id) was changed by another agent (\(event.name.rawValue))")
            events(event)
        }
    }

    /// Before answering "not logged in", look at the store once: another agent
    /// may have logged in since the last periodic check.
    private func catchUp(_ s: ProviderState) -> (Session, JSONText)? {
        check(s)
        return s.snapshot()
    }

    /// Ends `session` — unless another agent already replaced it in the store, in
    /// which case the replacement is returned. Takes the store lock so another
    /// agent's newer login is never removed.
    private func expireUnlessReplaced(_ s: ProviderState, _ session: Session, why: String) async throws(AuthError) -> Session {
        let held = try? await lockStore(s)
        defer { held?.unlock() }
        if held != nil, let current = try adoptStored(s), !current.sameTokens(as: session) { return current }
        throw expire(s, session, why: why)
    }

    /// Runs `checkStore` every `interval` seconds for the life of the service.
    public func watchStore(every interval: Double) {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.checkStore() }
        timer.resume()
        watcher.withLock { $0 = timer }
    }

    /// The server no longer accepts `session`: forget it and tell subscribers.
    private func expire(_ s: ProviderState, _ session: Session, why: String) -> AuthError {
        if s.clear(ifStill: session, persist: { persist(s.id, nil) }) {
            logger.info("session of \(s.id) ended: \(why)")
            events(.loggedOut(provider: s.id, reason: .expired))
        }
        return AuthError(.sessionExpired, "The \(s.config.displayName) session has expired; log in again.", provider: s.id)
    }

    /// Writes (or, for `nil`, removes) the stored session; a failure is logged, then thrown.
    private func save(_ id: String, _ session: Session?) throws {
        do {
            if let session { try store.save(session, for: id) } else { try store.remove(id) }
        } catch {
            logger.error("could not write the session of \(id) to the store: \(error)")
            throw error
        }
    }

    /// `save` for logouts and expiries, which happen whether or not the store takes them.
    private func persist(_ id: String, _ session: Session?) {
        try? save(id, session)
    }
}
