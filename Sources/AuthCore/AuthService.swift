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
/// injected store, HTTP transport and clock.
///
/// A thin composition: each provider's `SessionCoordinator` holds its session
/// and refresh state, `StoreSync` keeps it in step with other agent processes,
/// and the operations here are plain async functions returning Swift values.
/// They know nothing of JSON-RPC, ordering or stdio: `Protocol/` declares each
/// method (params, result, ordering) and binds it to them.
public final class AuthService: Sendable {
    public let config: AgentConfig
    private let coordinators: [String: SessionCoordinator]
    private let order: [String]
    private let sync: StoreSync
    /// Which store is in effect, for `status`; nil when the embedder did not say.
    public let storeStatus: StoreStatus?
    /// For `fetch`'s API calls; auth-server calls go through `HTTPCalls`.
    let transport: HTTPTransport
    private let clock: Clock
    private let logger: Logger
    private let events: @Sendable (AuthEvent) -> Void
    private let httpTimeout: Double
    private let timing: RefreshTiming
    /// Set when the process is about to exit: no refresh starts any more.
    private let shuttingDown = Locked(false)
    /// Where the origins of recently signed URLs go.
    private let routes: OriginCache<Route>

    /// Seconds a logout may spend telling the server; the local session is gone either way.
    static let revokeTimeout = 5.0

    /// - Parameter lockTimeout: how long to wait for another agent process that
    ///   holds a provider's store lock (then 1005, retryable).
    public init(config: AgentConfig, store: SessionStore, storeStatus: StoreStatus? = nil, transport: HTTPTransport, clock: Clock = SystemClock(),
                logger: Logger, httpTimeout: Double = 10, lockTimeout: Double = 15,
                events: @escaping @Sendable (AuthEvent) -> Void)
    {
        self.config = config
        self.httpTimeout = httpTimeout
        self.storeStatus = storeStatus
        self.timing = config.refreshTiming
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.events = events
        let sync = StoreSync(store: store, logger: logger, lockTimeout: lockTimeout, events: events)
        self.sync = sync
        let http = HTTPCalls(transport: transport, timeout: httpTimeout)
        let discovery = Discovery(http: http)
        var coordinators: [String: SessionCoordinator] = [:]
        for p in config.providers {
            let oauth = OAuthClient(config: p, http: http, clock: clock, discovery: discovery,
                                    lifetimeWarning: WarnOnce { logger.warn($0) })
            let provider = p.flow.descriptor.makeProvider(FlowContext(config: p, http: http, oauth: oauth, clock: clock,
                                                                      revokeTimeout: Self.revokeTimeout, browser: BrowserLauncher()))
            coordinators[p.id] = SessionCoordinator(config: p, provider: provider, session: sync.initialSession(p.id))
        }
        self.coordinators = coordinators
        self.order = config.providers.map(\.id)
        let matcher = OriginMatcher(config.providers.map { (provider: $0.id, origins: $0.origins) })
        self.routes = OriginCache { [coordinators] origin in
            // A token is only ever attached over https, or to loopback.
            Route(origin: origin, covering: origin.flatMap { $0.isSecureForBearer ? matcher.provider(for: $0) : nil }.flatMap { coordinators[$0] })
        }
    }

    // MARK: Lookups

    private func coordinator(_ id: String) throws(AuthError) -> SessionCoordinator {
        guard let c = coordinators[id] else {
            throw AuthError(.unknownProvider, "No provider \"\(id)\" is configured; known: \(order.joined(separator: ", ")).", provider: id)
        }
        return c
    }

    /// No session in memory: not logged in — or, when the keyring could not be read, 1010.
    private func notLoggedIn(_ c: SessionCoordinator) -> AuthError {
        if let why = sync.trouble(c.id) { return StoreSync.unavailable(c, why) }
        return AuthError(.notLoggedIn, "Not logged in to \(c.config.displayName).", provider: c.id)
    }

    public func knows(_ provider: String) -> Bool { coordinators[provider] != nil }

    /// The provider a request to `url` goes to (`explicit` when given), for ordering
    /// requests; nil when no provider covers it. Never throws: a bad request is
    /// refused by the operation itself.
    public func provider(forURL url: String, explicit: String?) -> String? {
        if let explicit { return explicit }
        return (try? route(url: url, provider: nil))??.id
    }

    /// A URL's origin and the provider covering it, if any.
    private final class Route: Sendable {
        let origin: Origin?
        let covering: SessionCoordinator?
        init(origin: Origin?, covering: SessionCoordinator?) {
            self.origin = origin
            self.covering = covering
        }
    }

    /// The provider a request goes to, or nil when no provider covers its origin.
    func route(url: String, provider explicit: String?) throws(AuthError) -> SessionCoordinator? {
        let route = routes.value(for: url)
        if let explicit {
            let c = try coordinator(explicit)
            guard route.covering === c else {
                throw AuthError(.originNotAllowed, "Provider \(explicit) does not cover \(route.origin?.description ?? "that URL").", provider: explicit)
            }
            return c
        }
        return route.covering
    }

    // MARK: status

    public func status(providers filter: Set<String>? = nil) -> [ProviderStatus] {
        order.filter { filter?.contains($0) ?? true }.map { id in
            let c = coordinators[id]!
            return ProviderStatus(id: id, displayName: c.config.displayName, flow: c.config.flow, fields: c.config.flow.descriptor.fields,
                                  session: c.current.map { ProviderStatus.LoggedIn(user: $0.user ?? [:], expiresAt: $0.expiresAt) })
        }
    }

    // MARK: login / logout

    public func login(provider id: String, credentials: Credentials?, context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        let c = try coordinator(id)
        let fresh = try await c.provider.login(credentials, context: context)
        let held = try await sync.lock(c)
        defer { held.unlock() }
        // Saved first (under the store lock, which every writer holds), then installed:
        // a login that is not saved would be lost with this process, so it fails and installs nothing.
        let session = c.numbered(login: fresh, storedGeneration: sync.storedGeneration(id))
        do {
            try sync.save(id, session)
        } catch {
            throw AuthError.storeUnavailable(c.config, error)
        }
        c.install(login: session)
        logger.info("logged in to \(id)")
        let user = session.user ?? [:]
        events(.loggedIn(provider: id, user: user, expiresAt: session.expiresAt))
        return LoginResult(provider: id, user: user, expiresAt: session.expiresAt)
    }

    /// Logs out; true when the server confirmed the revocation.
    public func logout(provider id: String) async throws(AuthError) -> Bool {
        let c = try coordinator(id)
        // The user asked to be logged out: if another agent holds the lock too long, log out anyway.
        let held = try? await sync.lock(c)
        defer { held?.unlock() }
        guard let session = c.current else { return false }
        sync.persist(id, nil)
        _ = c.clear(ifStill: session)
        logger.info("logged out of \(id)")
        events(.loggedOut(provider: id, reason: .logout))
        return await c.provider.revoke(session)
    }

    // MARK: sign / token / refresh

    /// `sign` from memory: the decision now, or nil when the token must be
    /// refreshed first (then `sign`, which waits). A stale token is signed with
    /// while a refresh starts in the background.
    ///
    /// `runsNow` is asked, before anything is decided, with the provider the
    /// request is ordered by (the one named, else the one covering the URL): a
    /// caller that routed nothing yet learns it from this one lookup, and false
    /// makes the answer nil without touching the session.
    public func signNow(url: String, provider: String?, runsNow: (String) -> Bool = { _ in true }) throws(AuthError) -> SignDecision? {
        let routed: SessionCoordinator?
        do {
            routed = try route(url: url, provider: provider)
        } catch {
            // An error is an answer too: it must not overtake an earlier login or logout of the provider named.
            if let provider, !runsNow(provider) { return nil }
            throw error
        }
        guard let c = routed else { return .unsigned }
        guard runsNow(c.id), let now = try sessionNow(c) else { return nil }
        return .signed(Signature(provider: c.id, authorization: now.authorization, expiresAt: now.session.expiresAt, generation: now.session.generation))
    }

    /// `token` from memory, like `signNow`: nil when the token must be refreshed first (then `token`).
    public func tokenNow(provider id: String) throws(AuthError) -> TokenResult? {
        guard let session = try sessionNow(try coordinator(id))?.session else { return nil }
        return TokenResult(accessToken: session.accessToken, tokenType: session.tokenType, expiresAt: session.expiresAt)
    }

    /// The session and its `Authorization` value if it can be used without waiting
    /// (fresh, or stale with a background refresh started); nil when it is expired.
    private func sessionNow(_ c: SessionCoordinator) throws(AuthError) -> SessionCoordinator.Snapshot? {
        guard let now = c.snapshot() ?? sync.catchUp(c) else { throw notLoggedIn(c) }
        switch timing.freshness(of: now.session, at: clock.now()) {
        case .fresh: break
        case .stale: refreshInBackground(c, now.session)
        case .expired: return nil
        }
        return now
    }

    /// `sign`, waiting for a refresh when the token needs one first.
    public func sign(url: String, provider: String?) async throws(AuthError) -> SignDecision {
        guard let c = try route(url: url, provider: provider) else { return .unsigned }
        let session = try await usableSession(c)
        return .signed(Signature(provider: c.id, authorization: session.authorization, expiresAt: session.expiresAt, generation: session.generation))
    }

    /// The session's access token, refreshed first when needed.
    public func token(provider id: String) async throws(AuthError) -> TokenResult {
        let session = try await usableSession(try coordinator(id))
        return TokenResult(accessToken: session.accessToken, tokenType: session.tokenType, expiresAt: session.expiresAt)
    }

    /// After a 401: refresh unless the rejected authorization is no longer the current one.
    public func refresh(provider id: String, failedAuthorization: String?) async throws(AuthError) -> RefreshResult {
        let c = try coordinator(id)
        let (session, refreshed) = try await sessionAfterRejection(c, failedAuthorization: failedAuthorization)
        return RefreshResult(provider: id, refreshed: refreshed, expiresAt: session.expiresAt)
    }

    /// The `refresh` rule, once for `refresh` and `fetch`: the session to use after the
    /// server rejected `failedAuthorization` (nil: the current one), and whether a refresh
    /// happened. Nothing is sent when that token was already replaced.
    func sessionAfterRejection(_ c: SessionCoordinator, failedAuthorization: String?) async throws(AuthError) -> (Session, Bool) {
        guard let session = c.current ?? sync.catchUp(c)?.session else { throw notLoggedIn(c) }
        if let failed = failedAuthorization, failed != session.authorization, failed != session.accessToken {
            return (session, false)
        }
        guard canRefresh(c, session) else {
            // The server rejected the current token and there is no way to get another.
            return (try await expireUnlessReplaced(c, session, why: "the server no longer accepts the token"), false)
        }
        return try await refresh(c, stale: session)
    }

    private func canRefresh(_ c: SessionCoordinator, _ session: Session) -> Bool {
        c.config.flow.descriptor.canRefresh(c.config, session)
    }

    /// The session to use now. A stale token is used while a refresh runs in the
    /// background; an expired (or nearly expired) one is refreshed first — and if
    /// that refresh fails for any reason but a dead session while a token is still
    /// valid, that token is used: never an error while a valid token exists.
    func usableSession(_ c: SessionCoordinator) async throws(AuthError) -> Session {
        guard let session = c.current ?? sync.catchUp(c)?.session else { throw notLoggedIn(c) }
        switch timing.freshness(of: session, at: clock.now()) {
        case .fresh: return session
        case .stale:
            refreshInBackground(c, session)
            return session
        case .expired: break
        }
        guard canRefresh(c, session) else {
            if RefreshTiming.isValid(session, at: clock.now()) { return session }  // no way to refresh: use it while it lasts
            return try await expireUnlessReplaced(c, session, why: "the session has expired")
        }
        do {
            return try await refresh(c, stale: session).0
        } catch where error.code != .sessionExpired {
            // The server, the store or the refresh limit failed, not the session: a token that is
            // still valid (the old one, or a new one that could not be saved) is used meanwhile.
            guard let current = c.current, RefreshTiming.isValid(current, at: clock.now()) else { throw error }
            return current
        }
    }

    /// Starts a refresh of a stale token that nobody waits for. A passing failure
    /// delays the next attempt (backoff with jitter); the token stays in use.
    private func refreshInBackground(_ c: SessionCoordinator, _ stale: Session) {
        guard canRefresh(c, stale), !shuttingDown.current, c.claimBackgroundRefresh(of: stale, now: clock.now()) else { return }
        Task { [self] in
            do throws(AuthError) {
                _ = try await refresh(c, stale: stale)
                c.backgroundRefreshEnded(failed: false, now: clock.now())
            } catch {
                c.backgroundRefreshEnded(failed: true, now: clock.now())
                // A rejected session was already ended (and announced) by the refresh itself.
                if error.code != .sessionExpired { logger.warn("background refresh of \(c.id) failed: \(error.message) The current token stays in use.") }
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
        let tasks = order.compactMap { coordinators[$0]!.refreshInFlight }
        guard !tasks.isEmpty else { return true }
        let done = DispatchSemaphore(value: 0)
        Task {
            for task in tasks { _ = try? await task.value }
            done.signal()
        }
        return done.wait(timeout: .now() + httpTimeout + 2) == .success
    }

    /// Single-flight refresh of `stale`; returns the session to use and whether a refresh happened.
    private func refresh(_ c: SessionCoordinator, stale: Session) async throws(AuthError) -> (Session, Bool) {
        let start = c.beginRefresh(of: stale, mayStart: !shuttingDown.current) { [self] () async throws -> Session in
            try await performRefresh(c, stale: stale)
        }
        let task: Task<Session, Error>
        switch start {
        case .alreadyFresh(let current): return (current, false)
        case .loggedOut: throw notLoggedIn(c)
        case .refused: throw AuthError.unavailable(c.config, "auth-agent is shutting down")
        case .joined(let t), .started(let t): task = t
        }
        do {
            return (try await task.value, true)
        } catch let e as AuthError {
            throw e
        } catch {
            throw AuthError(.authServerUnavailable, "\(c.config.displayName) is unavailable.", provider: c.id)
        }
    }

    /// One refresh, serialised with every other agent process on the same store:
    /// under the provider's lock, re-read the store first — if another agent
    /// already refreshed (or logged out), use that and send nothing.
    private func performRefresh(_ c: SessionCoordinator, stale: Session) async throws -> Session {
        let id = c.id
        let held = try await sync.lock(c)
        defer { held.unlock() }
        guard let current = try sync.adopt(c) else { throw notLoggedIn(c) }
        if !current.sameTokens(as: stale) { return current }
        // A refresh that got the lock after shutdown began has sent nothing yet: it must not start now.
        guard !shuttingDown.current else { throw AuthError.unavailable(c.config, "auth-agent is shutting down") }
        guard c.admitRefresh(now: clock.now()) else {
            throw AuthError(.excessiveRefresh, "\(c.config.displayName) was refreshed \(SessionCoordinator.refreshLimit) times within \(Int(SessionCoordinator.refreshLimitWindow)) s; not calling the server again yet.", provider: id)
        }
        switch await c.provider.refresh(stale) {
        case .refreshed(let fresh):
            // Persist before anything else: the server may already have retired the old refresh token.
            // If the store refuses, the fresh session is still installed (the old one may be dead at the
            // server), but the caller hears that it was not saved.
            guard c.isCurrent(stale) else { return c.current ?? fresh }
            let installed = SessionCoordinator.numbered(refresh: fresh, of: stale)
            var unsaved: Error?
            do { try sync.save(id, installed) } catch { unsaved = error }
            guard c.replace(stale, with: installed) else { return c.current ?? installed }
            logger.info("refreshed \(id)")
            events(.tokenRefreshed(provider: id, expiresAt: installed.expiresAt))
            if let unsaved { throw AuthError.storeUnavailable(c.config, unsaved) }
            return installed
        case .rejected(let why):
            // Before declaring the session dead, look again: newer tokens in the store win.
            if let current = try sync.adopt(c), !current.sameTokens(as: stale) { return current }
            throw expire(c, stale, why: "the server rejected the refresh (\(why))")
        case .transient(let why):
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.unavailable(c.config, why)
        case .malformed(let why):
            // Retrying would get the same answer, but the session did nothing wrong: keep it.
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.malformedResponse(c.config, why)
        case .unsupported:
            throw expire(c, stale, why: "the session cannot be refreshed")
        }
    }

    /// Ends `session` — unless another agent already replaced it in the store, in
    /// which case the replacement is returned. Takes the store lock so another
    /// agent's newer login is never removed.
    private func expireUnlessReplaced(_ c: SessionCoordinator, _ session: Session, why: String) async throws(AuthError) -> Session {
        let held = try? await sync.lock(c)
        defer { held?.unlock() }
        if held != nil {
            guard let current = try sync.adopt(c) else { throw notLoggedIn(c) }
            if !current.sameTokens(as: session) { return current }
        }
        throw expire(c, session, why: why)
    }

    /// The server no longer accepts `session`: forget it and tell subscribers.
    private func expire(_ c: SessionCoordinator, _ session: Session, why: String) -> AuthError {
        if c.isCurrent(session) {
            sync.persist(c.id, nil)
            _ = c.clear(ifStill: session)
            logger.info("session of \(c.id) ended: \(why)")
            events(.loggedOut(provider: c.id, reason: .expired))
        }
        return AuthError(.sessionExpired, "The \(c.config.displayName) session has expired; log in again.", provider: c.id)
    }

    // MARK: Other agents

    /// Picks up logins, logouts and refreshes made by other agent processes on
    /// the same store. Cheap when nothing changed: one `stat` per provider.
    public func checkStore() {
        for id in order { sync.check(coordinators[id]!) }
    }

    /// Runs `checkStore` now and every `interval` seconds for the life of the service.
    public func watchStore(every interval: Double) {
        sync.watch(order.map { coordinators[$0]! }, every: interval)
    }
}
