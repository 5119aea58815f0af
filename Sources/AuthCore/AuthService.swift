import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
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
    /// Auth-server calls, and the one metadata discoverer (and its cache) every provider, configured or learned, shares.
    let http: HTTPCalls
    let discovery: Discovery
    let timing: RefreshTiming
    /// Set when the process is about to exit: no refresh starts any more.
    let shuttingDown = Locked(false)
    /// Which provider, if any, a URL's request goes to.
    let router: Router
    /// The DPoP nonces servers gave, by origin: one memory for token requests, `sign` and `fetch`.
    let nonces = DPoPNonces()
    /// Browser logins waiting for their redirect, for `completeLogin`: shared by the services
    /// of one agent process (a socket agent's forward socket has a service of its own).
    public let pendingLogins: PendingLogins
    /// The door this service's connections come in by: what they see and may do (`Door`).
    public let door: Door
    /// The derived flows' way to their subjects' sessions (`AuthService+Subjects.swift`).
    let subjects: SubjectTokens

    /// Seconds a logout may spend telling the server; the local session is gone either way.
    static let revokeTimeout = 5.0

    /// - Parameter lockTimeout: how long to wait for another agent process that
    ///   holds a provider's store lock (then 1005, retryable).
    /// - Parameter door: the door the service serves; its providers are those of `config` the door serves.
    public init(config: AgentConfig, store: SessionStore, storeStatus: StoreStatus? = nil, transport: HTTPTransport, clock: Clock = SystemClock(),
                logger: Logger, httpTimeout: Double = 10, lockTimeout: Double = 15, pendingLogins: PendingLogins = PendingLogins(),
                door: Door = .host, events: @escaping @Sendable (AuthEvent) -> Void)
    {
        let config = door.visible(config)
        self.config = config
        self.door = door
        self.pendingLogins = pendingLogins
        self.httpTimeout = httpTimeout
        self.givenStoreStatus = storeStatus
        self.timing = config.refreshTiming
        // The one place every request of the service (auth server and `fetch`) goes out through.
        let transport = LoggingTransport.wrapping(transport, logger: logger)
        self.transport = transport
        self.clock = clock
        self.logger = logger
        // A subject's logout, here or in another process, logs its derived providers out after it is told.
        let subjects = SubjectTokens()
        self.subjects = subjects
        let events: @Sendable (AuthEvent) -> Void = { event in
            events(event)
            subjects.after(event)
        }
        self.events = events
        let sync = StoreSync(store: store, logger: logger, lockTimeout: lockTimeout, clock: clock, events: events)
        self.sync = sync
        let http = HTTPCalls(transport: transport, timeout: httpTimeout)
        let discovery = Discovery(http: http)
        self.http = http
        self.discovery = discovery
        let nonces = nonces
        let configured = config.providers.map {
            Self.makeAccounts($0, http: http, discovery: discovery, clock: clock, logger: logger, nonces: nonces, subjects: subjects)
        }
        configured.forEach(sync.load)
        self.registry = ProviderRegistry(configured)
        // Built before any provider is learned: the router caches the configured providers' origins.
        self.router = Router(registry: registry)
        subjects.bind(self)
        checkLearned()
    }

    /// A provider's accounts with a login for each of its flows.
    static func makeAccounts(_ p: ProviderConfig, http: HTTPCalls, discovery: Discovery, clock: Clock, logger: Logger,
                             nonces: DPoPNonces, subjects: SubjectTokens) -> ProviderAccounts {
        let oauth = OAuthClient(config: p, http: http, clock: clock, discovery: discovery,
                                lifetimeWarning: WarnOnce { logger.warn($0) }, nonces: nonces, tokenTypeWarning: WarnOnce { logger.warn($0) },
                                debug: { logger.debug($0) })
        var logins: [Flow: LoginProvider] = [:]
        for flow in p.flows {
            // A flow with a client of its own talks to the server through an OAuthClient of its own.
            let config = p.using(flow)
            let client = config == p ? oauth : OAuthClient(config: config, http: http, clock: clock, discovery: discovery,
                                                            lifetimeWarning: WarnOnce { logger.warn($0) }, nonces: nonces,
                                                            tokenTypeWarning: WarnOnce { logger.warn($0) }, debug: { logger.debug($0) })
            logins[flow] = flow.descriptor.makeProvider(FlowContext(config: config, http: http, oauth: client, clock: clock,
                                                                    revokeTimeout: Self.revokeTimeout, browser: BrowserLauncher(), subjects: subjects))
        }
        return ProviderAccounts(config: p, logins: logins)
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
