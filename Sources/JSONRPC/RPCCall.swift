import JSON

/// What a handler sees of one incoming request or notification.
public struct RPCCall: Sendable {
    public let method: String
    /// `nil` for notifications.
    public let id: JSONValue?
    public let params: RPCParams
    /// The host that made this call: notifications and requests back to it (`notify`,
    /// `request`), and what the program keeps for it (`session`).
    public let connection: RPCConnection
}

/// A handler's answer: a value now, or work that must wait (network, locks).
///
/// Deciding per call lets a method answer from memory on the reader thread —
/// `sign` with a fresh cached token costs no task hop — and go asynchronous
/// only when it really has to wait.
public enum RPCOutcome: Sendable {
    case result(JSONValue)
    /// A result serialized ahead of time; written as is.
    case encoded(JSONText)
    /// Work that must wait; the connection answers when it returns (and only then
    /// releases the requests ordered behind this one).
    case later(@Sendable () async throws -> JSONValue)
}

public typealias RPCHandler = @Sendable (RPCCall) throws -> RPCOutcome
