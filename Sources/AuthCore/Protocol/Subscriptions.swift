import JSON
import JSONRPC
import Locking

/// The host's subscription: which events, for which providers, to which connection.
public final class Subscriptions: Sendable {
    private struct State {
        var connection: RPCConnection?
        var events: Set<AuthEvent.Name> = []
        var providers: Set<String>?
    }

    private let state = Locked(State())

    public init() {}

    func subscribe(_ connection: RPCConnection, events: Set<AuthEvent.Name>, providers: Set<String>?) {
        state.withLock { $0 = State(connection: connection, events: events, providers: providers) }
    }

    func unsubscribe() { state.withLock { $0 = State() } }

    /// Sends the event to the host if it subscribed to it.
    public func deliver(_ event: AuthEvent) {
        let s = state.current
        guard let connection = s.connection, s.events.contains(event.name), s.providers?.contains(event.provider) ?? true else { return }
        connection.notify(event.name.rawValue, event.params)
    }
}
