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
/// A thin composition: each account of each provider has a `SessionCoordinator`
/// holding its session (with its shaped tokens) and refresh state, `StoreSync` keeps it in step with other agent processes,
/// and the operations here are plain async functions returning Swift values.
/// They know nothing of JSON-RPC, ordering or stdio: `Protocol/` declares each
/// method (params, result, ordering) and binds it to them.
public final class AuthService: Sendable {
    public let config: AgentConfig
    /// The configured providers and those learned at run time (`Learning/`).
    let registry: ProviderRegistry
    private var providers: [String: ProviderAccounts] { registry.providers }
    private var order: [String] { registry.order }
    let sync: StoreSync
    /// Which store is in effect, for `status`: what an `auto` store's records say
    /// (its choice is made per login), else what the embedder said (nil: nothing).
    public var storeStatus: StoreStatus? { (sync.store as? StoreStatusReporting)?.storeStatus ?? givenStoreStatus }
    private let givenStoreStatus: StoreStatus?
    /// For `fetch`'s API calls; auth-server calls go through `HTTPCalls`.
    let transport: HTTPTransport
    let clock: Clock
    let logger: Logger
    let events: @Sendable (AuthEvent) -> Void
    let httpTimeout: Double
    /// Auth-server calls, and the OpenID discovery cache every provider shares.
    let http: HTTPCalls
    let discovery: Discovery
    private let timing: RefreshTiming
    /// Set when the process is about to exit: no refresh starts any more.
    private let shuttingDown = Locked(false)
    /// Where the origins of recently signed URLs go.
    private let routes: OriginCache<Route>
    /// The DPoP nonces servers gave, by origin: one memory for token requests, `sign` and `fetch`.
    let nonces = DPoPNonces()
    /// Browser logins waiting for their redirect, for `completeLogin`: shared by the services
    /// of one agent process (a socket agent's forward socket has a service of its own).
    public let pendingLogins: PendingLogins

    /// Seconds a logout may spend telling the server; the local session is gone either way.
    static let revokeTimeout = 5.0

    /// - Parameter lockTimeout: how long to wait for another agent process that
    ///   holds a provider's store lock (then 1005, retryable).
    public init(config: AgentConfig, store: SessionStore, storeStatus: StoreStatus? = nil, transport: HTTPTransport, clock: Clock = SystemClock(),
                logger: Logger, httpTimeout: Double = 10, lockTimeout: Double = 15, pendingLogins: PendingLogins = PendingLogins(),
                events: @escaping @Sendable (AuthEvent) -> Void)
    {
        self.config = config
        self.pendingLogins = pendingLogins
        self.httpTimeout = httpTimeout
        self.givenStoreStatus = storeStatus
        self.timing = config.refreshTiming
        // The one place every request of the service (auth server and `fetch`) goes out through.
        let transport = LoggingTransport.wrapping(transport, logger: logger)
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.events = events
        let sync = StoreSync(store: store, logger: logger, lockTimeout: lockTimeout, events: events)
        self.sync = sync
        let http = HTTPCalls(transport: transport, timeout: httpTimeout)
        let discovery = Discovery(http: http)
        self.http = http
        self.discovery = discovery
        let nonces = nonces
        let configured = config.providers.map { Self.makeAccounts($0, http: http, discovery: discovery, clock: clock, logger: logger, nonces: nonces) }
        configured.forEach(sync.load)
        self.registry = ProviderRegistry(configured)
        let providers = registry.providers
        let matcher = OriginMatcher(config.providers.map { (provider: $0.id, origins: $0.origins) })
        self.routes = OriginCache { [providers] origin in
            // A token is only ever attached over https, or to loopback.
            let covering = origin.flatMap { $0.isSecureForBearer ? matcher.provider(for: $0) : nil }.flatMap { providers[$0] }
            return Route(origin: origin, covering: covering, shape: origin.flatMap { covering?.config.shape(for: $0) } ?? .none)
        }
        checkLearned()
    }

    /// A provider's accounts with a login for each of its flows.
    static func makeAccounts(_ p: ProviderConfig, http: HTTPCalls, discovery: Discovery, clock: Clock, logger: Logger,
                             nonces: DPoPNonces) -> ProviderAccounts {
        let oauth = OAuthClient(config: p, http: http, clock: clock, discovery: discovery,
                                lifetimeWarning: WarnOnce { logger.warn($0) }, nonces: nonces, tokenTypeWarning: WarnOnce { logger.warn($0) })
        var logins: [Flow: LoginProvider] = [:]
        for flow in p.flows {
            // A flow with a client of its own talks to the server through an OAuthClient of its own.
            let config = p.using(flow)
            let client = config == p ? oauth : OAuthClient(config: config, http: http, clock: clock, discovery: discovery,
                                                            lifetimeWarning: WarnOnce { logger.warn($0) }, nonces: nonces,
                                                            tokenTypeWarning: WarnOnce { logger.warn($0) })
            logins[flow] = flow.descriptor.makeProvider(FlowContext(config: config, http: http, oauth: client, clock: clock,
                                                                    revokeTimeout: Self.revokeTimeout, browser: BrowserLauncher()))
        }
        return ProviderAccounts(config: p, logins: logins)
    }

    // MARK: Lookups

    private func accounts(_ id: String) throws(AuthError) -> ProviderAccounts {
        guard let p = providers[id] else {
            // An empty list is a first run: say how to start rather than "known: ."
            let known = order.isEmpty ? "there is no configuration yet ('auth-agent config add' adds a provider)" : "known: \(order.joined(separator: ", "))"
            throw AuthError(.unknownProvider, "No provider \"\(id)\" is configured; \(known).", provider: id)
        }
        return p
    }

    /// No session in memory: not logged in — or, when the keyring could not be read, 1010.
    private func notLoggedIn(_ p: ProviderAccounts, account: String? = nil) -> AuthError {
        if let why = sync.trouble(p) { return StoreSync.unavailable(p.config, why) }
        if let account {
            return AuthError(.notLoggedIn, "Account \(account) is not logged in to \(p.config.displayName).", provider: p.id)
        }
        return AuthError(.notLoggedIn, "Not logged in to \(p.config.displayName).", provider: p.id)
    }

    private func notLoggedIn(_ c: SessionCoordinator) -> AuthError {
        if let why = sync.trouble(c) { return StoreSync.unavailable(c.config, why) }
        guard let p = providers[c.id] else { return AuthError(.notLoggedIn, "Not logged in to \(c.config.displayName).", provider: c.id) }
        return notLoggedIn(p, account: c.account)
    }

    public func knows(_ provider: String) -> Bool { providers[provider] != nil }

    /// Whether the account `choice` means has what a refresh needs (a refresh token, a refresh
    /// endpoint…). The command line's `refresh` asks first: `refresh` without one treats the
    /// current token as rejected and ends the session.
    public func canRefresh(provider id: String, account choice: AccountChoice = AccountChoice()) throws(AuthError) -> Bool {
        let c = try resolve(try accounts(id), choice)
        guard let session = c.current else { throw notLoggedIn(c) }
        return canRefresh(c, session)
    }

    /// The account a request uses (see `AccountChoice`); looks at the store once
    /// before answering "not logged in", since another agent may have logged in.
    func resolve(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> SessionCoordinator {
        if let c = try pick(p, choice) { return c }
        sync.catchUp(p)
        if let c = try pick(p, choice) { return c }
        throw notLoggedIn(p, account: choice.name(for: p.id))
    }

    /// The account `choice` means, by id or by a name its user logs in with (`ProviderAccounts.account(named:)`).
    private func pick(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> SessionCoordinator? {
        guard let name = choice.name(for: p.id) else { return p.defaultCoordinator }
        return try p.account(named: name)
    }

    /// The id of the logged-in account `account` names (for `selectAccount`, which keeps the id);
    /// nil for nil. Throws unless the provider exists and the account is logged in to it.
    @discardableResult
    public func checkAccount(provider: String, account: String?) throws(AuthError) -> String? {
        let p = try accounts(provider)
        guard let account else { return nil }
        return try resolve(p, AccountChoice(account: account)).account
    }

    /// The logged-in account of `provider` that `name` names, as every request's
    /// `account` is resolved — what git sends as the username of `https://alice@host/…`.
    /// Nil when none does (or the provider is unknown); throws when several do.
    public func account(named name: String, provider: String) throws(AuthError) -> String? {
        guard let p = providers[provider] else { return nil }
        sync.catchUp(p)
        return try p.account(named: name)?.account
    }

    /// Whether a `login` of `provider` through `flow` (nil: its default) is ordered beside its
    /// logged-in accounts' requests (`ProviderAccounts.interactiveLoginLeavesAccounts`).
    func loginLeavesAccounts(provider id: String, flow: Flow?) -> Bool {
        guard let p = providers[id] else { return false }
        return p.interactiveLoginLeavesAccounts(flow ?? p.config.flow)
    }

    /// The provider a request to `url` goes to (`explicit` when given), for ordering
    /// requests; nil when no provider covers it. Never throws: a bad request is
    /// refused by the operation itself.
    public func provider(forURL url: String, explicit: String?) -> String? {
        if let explicit { return explicit }
        return (try? route(url: url, provider: nil))??.accounts.id
    }

    /// `sign`'s routing for callers that hand out the token itself (git's and kubectl's
    /// helpers), so they cannot disagree with `sign` on who covers a URL or which shape
    /// its origin asks for: the provider covering `url` (https or loopback only) and that
    /// shape; nil when none covers it. `explicit` must cover the URL (else 1006).
    public func coverage(url: String, provider explicit: String? = nil) throws(AuthError) -> (provider: String, shape: TokenShape)? {
        try route(url: url, provider: explicit).map { ($0.accounts.id, $0.shape) }
    }

    /// A URL's origin, the provider covering it, if any, and the token shape configured there.
    private final class Route: Sendable {
        let origin: Origin?
        let covering: ProviderAccounts?
        let shape: TokenShape
        init(origin: Origin?, covering: ProviderAccounts?, shape: TokenShape) {
            self.origin = origin
            self.covering = covering
            self.shape = shape
        }
    }

    /// The provider a request goes to and the token shape its origin is configured
    /// with, or nil when no provider covers its origin.
    func route(url: String, provider explicit: String?) throws(AuthError) -> (accounts: ProviderAccounts, shape: TokenShape)? {
        let route = routes.value(for: url)
        // A learned provider covers its resource's path prefix, over https or loopback only (checked when learned).
        let learned = registry.learnedCovering(url, origin: route.origin)
        if let explicit {
            let p = try accounts(explicit)
            guard route.covering === p || learned === p else {
                throw AuthError(.originNotAllowed, "Provider \(explicit) does not cover \(route.origin?.description ?? "that URL").", provider: explicit)
            }
            return (p, route.shape)
        }
        if let learned { return (learned, .none) }
        return route.covering.map { ($0, route.shape) }
    }

    // MARK: status

    /// Every provider's accounts; the single-account fields describe the account
    /// that a request naming none would use under `choice`.
    public func status(providers filter: Set<String>? = nil, choice: AccountChoice = AccountChoice()) -> [ProviderStatus] {
        let (providers, order) = registry.state.withLock { ($0.providers, $0.order) }
        return order.filter { filter?.contains($0) ?? true }.map { id in
            let p = providers[id]!
            let used = (try? pick(p, choice)) ?? nil
            let defaultAccount = p.defaultCoordinator?.account
            let accounts = p.loggedIn.compactMap { c in
                c.current.map { ProviderStatus.Account(id: c.account, user: $0.user ?? [:], expiresAt: $0.expiresAt, isDefault: c.account == defaultAccount) }
            }
            var status = ProviderStatus(id: id, displayName: p.config.displayName, flows: p.config.flows, fields: p.config.flow.descriptor.fields,
                                        session: used?.current.map { ProviderStatus.LoggedIn(user: $0.user ?? [:], expiresAt: $0.expiresAt) },
                                        account: used?.account, accounts: accounts)
            status.learned = p.config.learned
            status.unreadable = p.all.compactMap { c in sync.trouble(c).map { ProviderStatus.Unreadable(account: c.account, reason: $0) } }
            status.gitUsername = p.config.gitUsername
            status.interactive = p.config.interactive()
            return status
        }
    }

    // MARK: login / logout / default account

    /// Logs in through `flow` (nil: the provider's default); a different identity than the
    /// accounts already logged in adds an account, the same identity replaces that account's
    /// session — whichever of the provider's flows logged it in before.
    public func login(provider id: String, flow: Flow? = nil, credentials: Credentials?, context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        try await login(try accounts(id), flow: flow, credentials: credentials, context: context)
    }

    /// `login` of `p`, which a learned provider's first login runs before `p` is registered.
    func login(_ p: ProviderAccounts, flow: Flow?, credentials: Credentials?, context: LoginContext) async throws(AuthError) -> LoginResult {
        let id = p.id
        let chosen = flow ?? p.config.defaultFlow()
        guard let login = p.logins[chosen] else {
            throw AuthError(.loginDenied, "\(p.config.displayName) has no \(chosen.rawValue) login; its flows: \(p.config.flowNames).", provider: id)
        }
        var fresh = try await login.login(credentials, context: context)
        if p.config.flows.count > 1 { fresh.flow = chosen }
        var typed: String?
        if case .password(let username, _)? = credentials { typed = username }
        fresh.user = AccountNames.user(fresh.user, typed: typed, previous: nil)
        let account = AccountIdentity.of(user: fresh.user)
        fresh.account = account
        let held = try await sync.lock(p.config)
        defer { held.unlock() }
        let c = p.coordinator(account)
        fresh.user = AccountNames.user(fresh.user, typed: nil, previous: c.current?.user)
        // Saved first (under the store lock, which every writer holds), then installed:
        // a login that is not saved would be lost with this process, so it fails and installs nothing.
        let session = c.numbered(login: fresh, storedGeneration: sync.storedGeneration(c))
        do {
            try sync.save(c, session)
            try sync.updateIndex(p) { $0.add(account) }
        } catch {
            throw AuthError.storeUnavailable(p.config, error)
        }
        c.install(login: session)
        logger.info("logged in to \(id) as \(AccountNames.display(session.user, account: account)) (account \(account))")
        let user = session.user ?? [:]
        events(.loggedIn(provider: id, account: account, user: user, expiresAt: session.expiresAt))
        return LoginResult(provider: id, account: account, user: user, expiresAt: session.expiresAt)
    }

    /// Logs out the account `choice` means, or every account; true when the server
    /// confirmed every revocation.
    public func logout(provider id: String, account choice: AccountChoice = AccountChoice(), all: Bool = false) async throws(AuthError) -> Bool {
        let p = try accounts(id)
        // The user asked to be logged out: if another agent holds the lock too long, log out anyway.
        let held = try? await sync.lock(p.config)
        defer { held?.unlock() }
        if held != nil { sync.check(p, evenIfBusy: true) }
        let targets = try all ? p.loggedIn : pick(p, choice).map { [$0] } ?? []
        var ended: [(SessionCoordinator, Session)] = []
        for c in targets {
            guard let session = c.current else { continue }
            sync.persist(c, nil)
            _ = c.clear(ifStill: session)
            ended.append((c, session))
        }
        guard !ended.isEmpty else { return false }
        try? sync.updateIndex(p) { index in ended.forEach { index.remove($0.0.account) } }
        var revoked = true
        for (c, session) in ended {
            logger.info("logged out of \(id) (\(c.account))")
            events(.loggedOut(provider: id, account: c.account, reason: .logout))
            if !(await p.renewer(of: session).revoke(session)) { revoked = false }
        }
        return revoked
    }

    /// Makes the account `account` names the provider's default, for every agent on the store; returns its id.
    @discardableResult
    public func setDefaultAccount(provider id: String, account name: String) async throws(AuthError) -> String {
        let p = try accounts(id)
        let held = try await sync.lock(p.config)
        defer { held.unlock() }
        let account = try resolve(p, AccountChoice(account: name)).account
        do {
            try sync.updateIndex(p) { $0.defaultAccount = account }
        } catch {
            throw AuthError.storeUnavailable(p.config, error)
        }
        logger.info("\(account) is now the default account of \(id)")
        return account
    }

    // MARK: sign / token / refresh

    /// `sign` from memory: the decision now, or nil when a token must be obtained
    /// first (then `sign`, which waits). A stale token is signed with while a
    /// refresh starts in the background. `shape` nil: the one the URL's origin is configured with.
    ///
    /// `runsNow` is asked, before anything is decided, with the provider the
    /// request is ordered by (the one named, else the one covering the URL): a
    /// caller that routed nothing yet learns it from this one lookup, and false
    /// makes the answer nil without touching the session.
    public func signNow(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                        method: String = "GET", runsNow: (String) -> Bool = { _ in true }) throws(AuthError) -> SignDecision? {
        let routed: (accounts: ProviderAccounts, shape: TokenShape)?
        do {
            routed = try route(url: url, provider: provider)
        } catch {
            // An error is an answer too: it must not overtake an earlier login or logout of the provider named.
            if let provider, !runsNow(provider) { return nil }
            throw error
        }
        guard let (p, originShape) = routed else { return .unsigned }
        guard runsNow(p.id) else { return nil }
        let c = try resolve(p, account)
        let shape = shape ?? originShape
        guard let credential = try credentialNow(c, shape) else { return nil }
        return .signed(try signature(p, c, shape, credential, method: method, url: url))
    }

    /// `token` from memory, like `signNow`: nil when the token must be obtained first (then `token`).
    public func tokenNow(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none) throws(AuthError) -> TokenResult? {
        guard let credential = try credentialNow(try resolve(try accounts(id), account), shape) else { return nil }
        return TokenResult(credential)
    }

    /// The token of `shape` if it can be used without waiting (fresh, or stale with a
    /// background refresh started); nil when it is expired or not obtained yet.
    private func credentialNow(_ c: SessionCoordinator, _ shape: TokenShape) throws(AuthError) -> Credential? {
        guard let now = c.snapshot() else { throw notLoggedIn(c) }
        let session = now.session
        if shape.isNone {
            switch timing.freshness(of: session, at: clock.now()) {
            case .fresh: break
            case .stale: refreshInBackground(c, session, .none)
            case .expired: return nil
            }
            return Credential(session, authorization: now.authorization)
        }
        guard let token = session.token(for: shape) else { return nil }
        switch timing.freshness(of: token, at: clock.now()) {
        case .fresh: break
        case .stale: refreshInBackground(c, session, shape)
        case .expired: return nil
        }
        return Credential(token, of: session)
    }

    /// `sign`, waiting for a token when one must be obtained first.
    public func sign(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                     method: String = "GET") async throws(AuthError) -> SignDecision {
        guard let (p, originShape) = try route(url: url, provider: provider) else { return .unsigned }
        let c = try resolve(p, account)
        let shape = shape ?? originShape
        return .signed(try signature(p, c, shape, try await usableCredential(c, shape), method: method, url: url))
    }

    /// A `sign` answer; a DPoP-bound token gets a fresh proof for this method and URL (never cached).
    private func signature(_ p: ProviderAccounts, _ c: SessionCoordinator, _ shape: TokenShape, _ credential: Credential,
                           method: String, url: String) throws(AuthError) -> Signature {
        var proof: String?
        if let key = credential.dpopKey {
            do {
                proof = try key.proof(method: method, url: url, at: clock.now(), accessToken: credential.accessToken, nonce: nonces.nonce(for: url))
            } catch {
                throw AuthError.unavailable(c.config, error.description)
            }
        }
        return Signature(provider: p.id, account: c.account, shape: shape, credential: credential, proof: proof)
    }

    /// The access token of `shape`, obtained or refreshed first when needed.
    public func token(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none) async throws(AuthError) -> TokenResult {
        TokenResult(try await usableCredential(try resolve(try accounts(id), account), shape))
    }

    /// After a 401: refresh unless the rejected authorization is no longer one the account holds.
    public func refresh(provider id: String, account: AccountChoice = AccountChoice(), failedAuthorization: String?) async throws(AuthError) -> RefreshResult {
        let c = try resolve(try accounts(id), account)
        let shape = failedAuthorization.flatMap { failed in
            c.current?.shaped.first { $0.authorization == failed || $0.accessToken == failed }?.shape
        } ?? .none
        let (credential, refreshed) = try await credentialAfterRejection(c, shape, failedAuthorization: failedAuthorization)
        return RefreshResult(provider: id, account: c.account, refreshed: refreshed, expiresAt: credential.expiresAt)
    }

    /// The `refresh` rule, once for `refresh` and `fetch`: the token of `shape` to use
    /// after the server rejected `failedAuthorization` (nil: the current one), and
    /// whether a refresh happened. Nothing is sent when that token was already replaced.
    func credentialAfterRejection(_ c: SessionCoordinator, _ shape: TokenShape, failedAuthorization: String?) async throws(AuthError) -> (Credential, Bool) {
        guard let session = c.current else { throw notLoggedIn(c) }
        let held = shape.isNone ? Credential(session, authorization: session.authorization) : session.token(for: shape).map { Credential($0, of: session) }
        if let held, let failed = failedAuthorization, failed != held.authorization, failed != held.accessToken {
            return (held, false)
        }
        if shape.isNone, !canRefresh(c, session) {
            // The server rejected the current token and there is no way to get another.
            let current = try await expireUnlessReplaced(c, session, why: "the server no longer accepts the token")
            return (Credential(current, authorization: current.authorization), false)
        }
        let (fresh, refreshed) = try await refresh(c, stale: session, shape: shape)
        guard let credential = Self.credential(in: fresh, shape) else { return (try await usableCredential(c, shape), true) }
        return (credential, refreshed)
    }

    private static func credential(in session: Session, _ shape: TokenShape) -> Credential? {
        if shape.isNone { return Credential(session, authorization: session.authorization) }
        return session.token(for: shape).map { Credential($0, of: session) }
    }

    private func canRefresh(_ c: SessionCoordinator, _ session: Session) -> Bool {
        c.config.flow.descriptor.canRefresh(c.config, session)
    }

    /// The token of `shape` to use now. A stale token is used while a refresh runs in
    /// the background; an expired (or nearly expired, or missing) one is obtained
    /// first — and if that fails for any reason but a dead session or a refused shape
    /// while a token is still valid, that token is used: never an error while a valid token exists.
    func usableCredential(_ c: SessionCoordinator, _ shape: TokenShape) async throws(AuthError) -> Credential {
        // Another shape's refresh (here or in another agent) may replace the session
        // under this one's feet: then look again, a few times at most.
        for _ in 0..<4 {
            guard let session = c.current else { throw notLoggedIn(c) }
            let held = Self.credential(in: session, shape)
            if let held {
                switch timing.freshness(of: held, at: clock.now()) {
                case .fresh: return held
                case .stale:
                    refreshInBackground(c, session, shape)
                    return held
                case .expired: break
                }
            }
            if shape.isNone, !canRefresh(c, session) {
                if RefreshTiming.isValid(session, at: clock.now()) { return Credential(session, authorization: session.authorization) }  // no way to refresh: use it while it lasts
                let current = try await expireUnlessReplaced(c, session, why: "the session has expired")
                return Credential(current, authorization: current.authorization)
            }
            do {
                // Another shape's refresh may have replaced the session first (it keeps this shape's
                // old token): only a token callers need not wait for ends the loop.
                let (fresh, _) = try await refresh(c, stale: session, shape: shape)
                if let credential = Self.credential(in: fresh, shape), timing.freshness(of: credential, at: clock.now()) != .expired { return credential }
            } catch where error.code != .sessionExpired && error.code != .scopeNotGranted {
                // The server, the store or the refresh limit failed, not the session: a token that is
                // still valid (the old one, or a new one that could not be saved) is used meanwhile.
                guard let current = c.current.flatMap({ Self.credential(in: $0, shape) }), RefreshTiming.isValid(current, at: clock.now()) else { throw error }
                return current
            }
        }
        throw AuthError.unavailable(c.config, "the session kept changing while a token for \(shape) was obtained")
    }

    /// Starts a refresh of a stale token that nobody waits for. A passing failure
    /// delays the next attempt (backoff with jitter); the token stays in use.
    private func refreshInBackground(_ c: SessionCoordinator, _ stale: Session, _ shape: TokenShape) {
        guard !shape.isNone || canRefresh(c, stale), !shuttingDown.current,
              c.claimBackgroundRefresh(of: stale, shape: shape, now: clock.now()) else { return }
        Task { [self] in
            do throws(AuthError) {
                _ = try await refresh(c, stale: stale, shape: shape)
                c.backgroundRefreshEnded(shape: shape, failed: false, now: clock.now())
            } catch {
                c.backgroundRefreshEnded(shape: shape, failed: true, now: clock.now())
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
        let providers = providers
        let tasks = order.flatMap { providers[$0]?.all.flatMap(\.refreshesInFlight) ?? [] }
        guard !tasks.isEmpty else { return true }
        let done = DispatchSemaphore(value: 0)
        Task {
            for task in tasks { _ = try? await task.value }
            done.signal()
        }
        return done.wait(timeout: .now() + httpTimeout + 2) == .success
    }

    /// Single-flight refresh of `stale`'s token of `shape`; returns the session to
    /// use and whether a refresh happened.
    private func refresh(_ c: SessionCoordinator, stale: Session, shape: TokenShape = .none) async throws(AuthError) -> (Session, Bool) {
        let start = c.beginRefresh(of: stale, shape: shape, mayStart: !shuttingDown.current) { [self] () async throws -> Session in
            try await performRefresh(c, stale: stale, shape: shape)
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
    /// already refreshed (or logged out), use that and send nothing. A token of
    /// another shape comes from the same refresh token; a rotation it brings
    /// replaces the refresh token for every shape, in one new generation.
    private func performRefresh(_ c: SessionCoordinator, stale: Session, shape: TokenShape) async throws -> Session {
        let id = c.id
        let held = try await sync.lock(c.config)
        defer { held.unlock() }
        guard let current = try sync.adopt(c) else { throw notLoggedIn(c) }
        if !current.sameTokens(as: stale) { return current }
        // A refresh that got the lock after shutdown began has sent nothing yet: it must not start now.
        guard !shuttingDown.current else { throw AuthError.unavailable(c.config, "auth-agent is shutting down") }
        guard let p = providers[c.id] else { throw notLoggedIn(c) }
        try sync.admitRefresh(p, c, shape: shape, now: clock.now())
        switch await (providers[c.id]?.renewer(of: stale) ?? c.provider).refresh(stale, shape: shape) {
        case .refreshed(let fresh):
            // Persist before anything else: the server may already have retired the old refresh token.
            // If the store refuses, the fresh session is still installed (the old one may be dead at the
            // server), but the caller hears that it was not saved.
            guard c.isCurrent(stale) else { return c.current ?? fresh }
            let installed = SessionCoordinator.numbered(refresh: Self.merge(fresh, into: stale, shape: shape), of: stale)
            var unsaved: Error?
            do { try sync.save(c, installed) } catch { unsaved = error }
            guard c.replace(stale, with: installed) else { return c.current ?? installed }
            if shape.isNone {
                logger.info("refreshed \(id) (\(c.account))")
                events(.tokenRefreshed(provider: id, account: c.account, expiresAt: installed.expiresAt))
            } else {
                logger.info("obtained a token for \(shape) of \(id) (\(c.account))")
            }
            if let unsaved { throw AuthError.storeUnavailable(c.config, unsaved) }
            return installed
        case .rejected(let why):
            // Before declaring the session dead, look again: newer tokens in the store win.
            if let current = try sync.adopt(c), !current.sameTokens(as: stale) { return current }
            // A learned provider's registration the server forgot: the next login registers again.
            if let learned = c.config.learned, why.hasPrefix("invalid_client"), let clientId = c.config.clientId {
                try? await dropRegistration(issuer: learned.issuer, clientId: clientId)
            }
            throw expire(c, stale, why: "the server rejected the refresh (\(why))")
        case .notGranted(let why):
            throw AuthError.scopeNotGranted(c.config, shape, why)
        case .transient(let why):
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.unavailable(c.config, why)
        case .malformed(let why):
            // Retrying would get the same answer, but the session did nothing wrong: keep it.
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.malformedResponse(c.config, why)
        case .unsupported:
            guard shape.isNone else {
                throw AuthError.scopeNotGranted(c.config, shape, "its \(c.config.flow.rawValue) flow cannot ask for tokens of other scopes, audiences or resources")
            }
            throw expire(c, stale, why: "the session cannot be refreshed")
        }
    }

    /// The session after a refresh of `shape`: for the session's own token, the new
    /// session keeping the account and its shaped tokens; for another shape, the old
    /// session with that token replaced and the refresh token the server returned.
    static func merge(_ fresh: Session, into stale: Session, shape: TokenShape) -> Session {
        var merged: Session
        if shape.isNone {
            merged = fresh
            merged.shaped = stale.pruningShapes(at: fresh.obtainedAt).shaped
        } else {
            merged = stale.replacing(ShapedToken(shape: shape, accessToken: fresh.accessToken, tokenType: fresh.tokenType,
                                                 expiresAt: fresh.expiresAt, obtainedAt: fresh.obtainedAt))
            merged.refreshToken = fresh.refreshToken ?? stale.refreshToken
        }
        merged.account = stale.account
        merged.flow = stale.flow
        return merged
    }

    /// Ends `session` — unless another agent already replaced it in the store, in
    /// which case the replacement is returned. Takes the store lock so another
    /// agent's newer login is never removed.
    private func expireUnlessReplaced(_ c: SessionCoordinator, _ session: Session, why: String) async throws(AuthError) -> Session {
        let held = try? await sync.lock(c.config)
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
            sync.persist(c, nil)
            _ = c.clear(ifStill: session)
            if let p = providers[c.id] { try? sync.updateIndex(p) { $0.remove(c.account) } }
            logger.info("session of \(c.id) (\(c.account)) ended: \(why)")
            events(.loggedOut(provider: c.id, account: c.account, reason: .expired))
        }
        return AuthError(.sessionExpired, "The \(c.config.displayName) session has expired; log in again.", provider: c.id)
    }

    // MARK: Other agents

    /// Picks up logins, logouts and refreshes made by other agent processes on
    /// the same store. Cheap when nothing changed: one `stat` per record.
    public func checkStore() {
        checkLearned()
        let providers = providers
        for id in order { providers[id].map { sync.check($0) } }
    }

    /// Runs `checkStore` now and every `interval` seconds for the life of the service.
    public func watchStore(every interval: Double) {
        sync.watch(every: interval) { [self] in
            checkLearned()
            let providers = providers
            return order.compactMap { providers[$0] }
        }
    }
}
