import JSON
import JSONRPC
import Locking

/// Each connection's subscription: which events, for which providers. One entry per
/// connection (a socket agent serves many), removed when it unsubscribes or closes.
public final class Subscriptions: Sendable {
    private struct Entry {
        let connection: RPCConnection
        let events: Set<AuthEvent.Name>
        let providers: Set<String>?
    }

    private let entries = Locked([ObjectIdentifier: Entry]())

    public init() {}

    func subscribe(_ connection: RPCConnection, events: Set<AuthEvent.Name>, providers: Set<String>?) {
        entries.withLock { $0[ObjectIdentifier(connection)] = Entry(connection: connection, events: events, providers: providers) }
    }

    func unsubscribe(_ connection: RPCConnection) { entries.withLock { $0[ObjectIdentifier(connection)] = nil } }

    /// Sends the event to every connection subscribed to it.
    public func deliver(_ event: AuthEvent) {
        for entry in entries.current.values where entry.events.contains(event.name) && (entry.providers?.contains(event.provider) ?? true) {
            entry.connection.notify(event.name.rawValue, event.params)
        }
    }
}
