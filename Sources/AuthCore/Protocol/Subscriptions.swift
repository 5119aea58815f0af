import Locking

/// The hosts subscribed to events, across every connection of one service: a host joins when
/// it subscribes and leaves when it unsubscribes or its connection closes (`AuthHost`, which
/// keeps what it subscribed to).
public final class Subscriptions: Sendable {
    private let hosts = Locked([ObjectIdentifier: AuthHost]())

    public init() {}

    func add(_ host: AuthHost) { hosts.withLock { $0[ObjectIdentifier(host)] = host } }

    func remove(_ host: AuthHost) { hosts.withLock { $0[ObjectIdentifier(host)] = nil } }

    /// How many hosts are subscribed.
    var count: Int { hosts.current.count }

    /// Sends the event to every host subscribed to it.
    public func deliver(_ event: AuthEvent) {
        for host in hosts.current.values { host.deliver(event) }
    }
}
