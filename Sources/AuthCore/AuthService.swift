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
/// A thin composition: each account of each provider has an `AccountSession`
/// holding its session (with its shaped tokens) and refresh state, `StoreSync` keeps it in step with other agent processes,
/// and the operations here are plain async functions returning Swift values.
/// They know nothing of JSON-RPC, ordering or stdio: `Protocol/` declares each
/// method (params, result, ordering) and binds it to them.
public final class AuthService: Sendable {
    public let config: AgentConfig
    /// The configured providers and those learned at run time (`Learning/`).
    let registry: ProviderRegistry
    var providers: [String: ProviderAccounts] { registry.providers }
    var order: [String] { registry.order }
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
    let timing: RefreshTiming
    /// Set when the process is about to exit: no refresh starts any more.
    let shuttingDown = Locked(false)
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
        let sync = StoreSync(store: store, logger: logger, lockTimeout: lockTimeout, clock: clock, events: events)
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

    func accounts(_ id: String) throws(AuthError) -> ProviderAccounts {
        guard let p = providers[id] else {
            // An empty list is a first run: say how to start rather than "known: ."
            let known = order.isEmpty ? "there is no configuration yet ('auth-agent config add' adds a provider)" : "known: \(order.joined(separator: ", "))"
            throw AuthError(.unknownProvider, "No provider \"\(id)\" is configured; \(known).", provider: id)
        }
        return p
    }

    /// No session in memory: not logged in — or, when the keyring could not be read, 1010.
    func notLoggedIn(_ p: ProviderAccounts, account: String? = nil) -> AuthError {
        if let why = sync.trouble(p) { return StoreSync.unavailable(p.config, why) }
        if let account {
            return AuthError(.notLoggedIn, "Account \(account) is not logged in to \(p.config.displayName).", provider: p.id)
        }
        return AuthError(.notLoggedIn, "Not logged in to \(p.config.displayName).", provider: p.id)
    }

    func notLoggedIn(_ c: AccountSession) -> AuthError {
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
        return c.canRefresh(session)
    }

    /// The account a request uses (see `AccountChoice`); looks at the store once
    /// before answering "not logged in", since another agent may have logged in.
    func resolve(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> AccountSession {
        if let c = try pick(p, choice) { return c }
        sync.catchUp(p)
        if let c = try pick(p, choice) { return c }
        throw notLoggedIn(p, account: choice.name(for: p.id))
    }

    /// The account `choice` means, by id or by a name its user logs in with (`ProviderAccounts.account(named:)`).
    func pick(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> AccountSession? {
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
