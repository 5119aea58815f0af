import JSON

/// What a program keeps for one host beside the engine's own per-connection state — an auth
/// agent's subscription and account selections — handed to its `RPCConnection` at the start
/// and told when the connection closes, so it lives exactly as long as the connection. The
/// engine never looks inside; handlers reach it through `RPCCall.connection.session`.
///
/// A host whose end is the process's (stdio) is never told: the process ends instead.
public protocol HostSession: AnyObject, Sendable {
    /// The connection closed: its last answer is written or dropped, and what it was still
    /// running is cancelled. Drop everything kept for the host (and any reference to the
    /// connection, which holds this session).
    func closed()
    /// The host said what it can do (`initialize`'s `capabilities`), before any other request of it runs.
    func initialized(capabilities: JSONObject)
}

extension HostSession {
    public func initialized(capabilities: JSONObject) {}
}
