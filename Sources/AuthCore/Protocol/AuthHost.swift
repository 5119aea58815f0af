import JSON
import JSONRPC
import Locking

/// One connected host as the auth methods see it: its subscription (which events, for which
/// providers) and its account selections (`selectAccount`, by provider). The program makes one
/// per connection and hands it to the `RPCConnection` as its `session`, so it lives exactly as
/// long as the connection: a closed socket connection's choices go with it, and a later
/// connection inherits nothing.
///
/// The browser logins waiting for a pasted redirect are not here: any connection may complete
/// one (`completeLogin`), so they are the agent's (`PendingLogins`); a closed connection's
/// login is cancelled and leaves them when it stops waiting.
public final class AuthHost: HostSession {
    private struct State {
        var subscription: Subscription?
        var selected: [String: String] = [:]
        /// `initialize`'s `capabilities.loginFields`: this host asks its person for a flow's fields.
        var asksLoginFields = false
        /// `initialize`'s `capabilities.presentLogin`: what of a login this host presents itself.
        var presentsLogin: PresentLogin.Capability?
    }

    /// Holds the connection to notify while subscribed: dropped by `unsubscribe` and `closed`,
    /// so the connection (which holds this host) is not kept alive by it.
    private struct Subscription {
        let connection: RPCConnection
        let events: Set<AuthEvent.Name>
        let providers: Set<String>?
    }

    private let state = Locked(State())
    /// `state.selected.count`, stored under the lock: a host that selected nothing (most) is
    /// answered `[:]` by `selected` without the lock, on every `sign`.
    private let selections = AtomicCount()
    private let subscriptions: Subscriptions

    /// - Parameter subscriptions: the agent's subscribed hosts, which this one joins when it subscribes.
    public init(subscriptions: Subscriptions) {
        self.subscriptions = subscriptions
    }

    /// The host of a call's connection; nil for a connection made without one.
    static func host(of connection: RPCConnection) -> AuthHost? { connection.session as? AuthHost }

    /// The host of a call's connection, which subscribing and selecting need.
    static func of(_ connection: RPCConnection) throws(RPCError) -> AuthHost {
        guard let host = host(of: connection) else { throw .internalError("this connection was made without its AuthHost") }
        return host
    }

    func subscribe(_ connection: RPCConnection, events: Set<AuthEvent.Name>, providers: Set<String>?) {
        state.withLock { $0.subscription = Subscription(connection: connection, events: events, providers: providers) }
        subscriptions.add(self)
    }

    func unsubscribe() {
        state.withLock { $0.subscription = nil }
        subscriptions.remove(self)
    }

    /// Sends the event to this host when it subscribed to it.
    func deliver(_ event: AuthEvent) {
        guard let s = state.current.subscription,
              s.events.contains(event.name), event.provider.map({ s.providers?.contains($0) ?? true }) ?? true
        else { return }
        s.connection.notify(event.name.rawValue, event.params)
    }

    /// Uses `account` (nil: the default again) for this host's requests of `provider` that name none.
    func select(_ account: String?, provider: String) {
        state.withLock { s in
            s.selected[provider] = account
            selections.store(s.selected.count)
        }
    }

    /// This host's selections, by provider.
    var selected: [String: String] { selections.load() == 0 ? [:] : state.withLock { $0.selected } }

    public func initialized(capabilities: JSONObject) {
        state.withLock { s in
            s.asksLoginFields = capabilities["loginFields"] == true
            s.presentsLogin = PresentLogin.Capability(capabilities["presentLogin"])
        }
    }

    /// What of a login this host presents itself (`PresentLogin`); nil: it only listens for `loginPrompt`.
    var presentsLogin: PresentLogin.Capability? { state.withLock { $0.presentsLogin } }

    /// Whether a login of this host's may ask it for a flow's fields (`AuthMethods.loginFields`).
    var asksLoginFields: Bool { state.withLock { $0.asksLoginFields } }

    public func closed() {
        unsubscribe()
        state.withLock { s in
            s.selected = [:]
            selections.store(0)
        }
    }
}

/// Which account a request means: the one it names, else its host's selection, else the
/// provider's default. The selections themselves live in each connection's `AuthHost`.
struct AccountSelections: Sendable {
    func select(_ account: String?, provider: String, on connection: RPCConnection) throws(RPCError) {
        try AuthHost.of(connection).select(account, provider: provider)
    }

    func choice(_ account: String?, on connection: RPCConnection) -> AccountChoice {
        AccountChoice(account: account, selected: AuthHost.host(of: connection)?.selected ?? [:])
    }
}

extension AuthMethods {
    /// The optional `account` param with the connection's selections.
    static func account(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> AccountChoice {
        try account(try call.params.optionalString("account"), call, context)
    }

    /// The account a call names (or the connection's selection), from its decoded `account`.
    static func account(_ account: String?, _ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> AccountChoice {
        if account?.isEmpty == true { throw .invalidParams("'account' must not be empty") }
        return context.selections.choice(account, on: call.connection)
    }
}
