import JSON

/// What a handler sees of one incoming request or notification.
public struct RPCCall: Sendable {
    public let method: String
    /// `nil` for notifications.
    public let id: JSONValue?
    public let params: RPCParams
    /// Sends notifications back to the host that made this call.
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
    /// Work that must wait; the connection answers when it returns. `answered`
    /// runs once that answer is queued for output, whatever it is (result, error,
    /// cancellation): work that later requests are ordered behind releases them
    /// there, so the host sees this answer before anything they cause. In a
    /// batch, which is answered whole, it runs as soon as the answer is known.
    case later(@Sendable () async throws -> JSONValue, answered: (@Sendable () -> Void)? = nil)
}

public typealias RPCHandler = @Sendable (RPCCall) throws -> RPCOutcome
