import Foundation
import JSON
import JSONRPC

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
    /// Which store is in effect, for `status`; nil when the embedder did not say.
    private let storeStatus: StoreStatus?
    /// Providers whose stored session could not be read because the keyring is
    /// locked or gone, with what it said: they answer 1010, not "not logged in".
    private let storeTrouble = Locked<[String: String]>([:])
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
    public init(config: AgentConfig, store: SessionStore, storeStatus: StoreStatus? = nil, transport: HTTPTransport, clock: Clock = SystemClock(),
                logger: Logger, httpTimeout: Double = 10, lockTimeout: Double = 15,
                events: @escaping @Sendable (AuthEvent) -> Void)
    {
        self.config = config
        self.lockTimeout = lockTimeout
        self.httpTimeout = httpTimeout
        self.timing = config.refreshTiming
        self.store = store
        self.storeStatus = storeStatus
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.events = events
        let http = HTTPCalls(transport: transport, timeout: httpTimeout)
        let discovery = Discovery(http: http)
        var states: [String: ProviderState] = [:]
        for p in config.providers {
            let oauth = OAuthClient(config: p, http: http, clock: clock, discovery: discovery)
            let provider: LoginProvider
            let revoke = Self.revokeTimeout
            switch p.flow {
            case .session: provider = SessionAPIProvider(config: p, http: http, clock: clock, revokeTimeout: revoke)
            case .password: provider = PasswordProvider(config: p, oauth: oauth, revokeTimeout: revoke)
            case .clientCredentials: provider = ClientCredentialsProvider(config: p, oauth: oauth, revokeTimeout: revoke)
            case .token: provider = StaticTokenProvider(config: p, oauth: oauth, clock: clock)
            case .deviceCode: provider = DeviceCodeProvider(config: p, oauth: oauth, clock: clock, revokeTimeout: revoke, browser: BrowserLauncher())
            case .authorizationCode:
                provider = AuthorizationCodeProvider(config: p, oauth: oauth, clock: clock, revokeTimeout: revoke, browser: BrowserLauncher())
            }
            var session: Session?
            do {
                session = try store.load(p.id)
                stamps.withLock { $0[p.id] = store.modificationStamp(p.id) }
            } catch SessionStoreError.unavailable(let why) {
                // No stamp: the next check reads it again.
                storeTrouble.withLock { $0[p.id] = why }
                logger.warn("could not read the stored session of \(p.id): the keyring: \(why)")
            } catch {
                logger.warn("could not read the stored session of \(p.id): \(error)")
                stamps.withLock { $0[p.id] = store.modificationStamp(p.id) }
            }
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
        if let why = storeTrouble.current[s.id] { return storeUnavailable(s, why) }
        return AuthError(.notLoggedIn, "Not logged in to \(s.config.displayName).", provider: s.id)
    }

    private func storeUnavailable(_ s: ProviderState, _ why: String) -> AuthError {
        AuthError(.storeUnavailable, "The keyring holding the \(s.config.displayName) session is unavailable: \(why).", provider: s.id)
    }

    // MARK: status

    public func status(providers filter: Set<String>? = nil) -> JSONValue {
        var list: [JSONValue] = []
        for id in order where filter?.contains(id) ?? true {
            let s = states[id]!
            var entry: JSONObject = [
                "id": .string(id), "displayName": .string(s.config.displayName), "flow": .string(s.config.flow.rawValue),
                "fields": .array(Self.fields(s.config.flow)),
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
        guard let storeStatus else { return ["providers": .array(list)] }
        var store: JSONObject = ["kind": .string(storeStatus.kind.rawValue)]
        if let reason = storeStatus.reason { store["reason"] = .string(reason) }
        return ["store": .object(store), "providers": .array(list)]
    }

    public func knows(_ provider: String) -> Bool { states[provider] != nil }

    static func fields(_ flow: Flow) -> [JSONValue] {
        switch flow {
        case .session, .password:
            return [["name": "username", "label": "Username", "secret": false], ["name": "password", "label": "Password", "secret": true]]
        case .token:
            return [["name": "token", "label": "Token", "secret": true]]
        default:
            return []
        }
    }

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
        s.replace(with: session) { persist(id, $0) }
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
        switch s.config.flow {
        case .token: return false
        case .clientCredentials: return true
        case .session: return s.config.refreshEndpoint != nil
        default: return session.refreshToken != nil
        }
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
        } catch where error.isPassing {
            guard let current = s.current, current.sameTokens(as: session), RefreshTiming.isValid(current, at: clock.now()) else { throw error }
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
                if error.isPassing { logger.warn("background refresh of \(s.id) failed: \(error.message) The current token stays in use.") }
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
            let installed = s.complete(refreshOf: stale, with: fresh) { persist(id, $0) }
            guard installed else { return s.current ?? fresh }
            logger.info("refreshed \(id)")
            events(.tokenRefreshed(provider: id, expiresAt: fresh.expiresAt))
            return fresh
        case .rejected(let why):
            // Before declaring the session dead, look again: newer tokens in the store win.
            if let current = try adoptStored(s), !current.sameTokens(as: stale) { return current }
            throw expire(s, stale, why: "the server rejected the refresh (\(why))")
        case .transient(let why):
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.unavailable(s.config, why)
        case .unsupported:
            throw expire(s, stale, why: "the session cannot be refreshed")
        }
    }

    /// Takes the provider's store lock, shared with other agent processes.
    private func lockStore(_ s: ProviderState) async throws(AuthError) -> StoreLock {
        do {
            return try await store.lock(s.id, timeout: lockTimeout)
        } catch {
            throw AuthError(.authServerUnavailable, "Another auth-agent is busy with \(s.config.displayName); try again.", provider: s.id)
        }
    }

    /// Adopts whatever another agent process saved for this provider; the session now current.
    private func adoptStored(_ s: ProviderState) throws(AuthError) -> Session? {
        let id = s.id
        do {
            if let event = try s.reconcile(load: { () throws(KeyringTrouble) -> Session? in try loadQuietly(id) }) {
                logger.info("\(id) was changed by another agent (\(event.name.rawValue))")
                events(event)
            }
        } catch {
            throw storeUnavailable(s, error.reason)
        }
        stamps.withLock { $0[id] = store.modificationStamp(id) }
        guard let current = s.current else { throw notLoggedIn(s) }
        return current
    }

    /// The stored session; nil (with a warning) when it is unreadable. Throws only
    /// when the keyring is unavailable: then the session in memory is kept as it is.
    private func loadQuietly(_ id: String) throws(KeyringTrouble) -> Session? {
        do {
            let session = try store.load(id)
            storeTrouble.withLock { $0[id] = nil }
            return session
        } catch SessionStoreError.unavailable(let why) {
            storeTrouble.withLock { $0[id] = why }
            throw KeyringTrouble(reason: why)
        } catch {
            logger.warn("could not read the stored session of \(id): \(error)")
            return nil
        }
    }

    struct KeyringTrouble: Error { let reason: String }

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
        do {
            if let event = try s.reconcile(load: { () throws(KeyringTrouble) -> Session? in try loadQuietly(id) }) {
                logger.info("\(id) was changed by another agent (\(event.name.rawValue))")
                events(event)
            }
        } catch {
            // Keep what is in memory, and read again at the next check.
            stamps.withLock { $0[id] = nil }
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

    private func persist(_ id: String, _ session: Session?) {
        do {
            if let session { try store.save(session, for: id) } else { try store.remove(id) }
        } catch {
            logger.error("could not write the session of \(id) to the store: \(error)")
        }
    }
}
