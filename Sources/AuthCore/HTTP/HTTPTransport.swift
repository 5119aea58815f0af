/// Sends HTTP requests for the agent.
///
/// A protocol so that flows (login, refresh, revocation) can be unit-tested
/// against scripted responses, and so that every real request goes through one
/// place that enforces no redirects, no cookies, timeouts and a size cap.
public protocol HTTPTransport: Sendable {
    /// Returns any response the server sent, whatever its status; throws only
    /// when there is no response (`HTTPTransportError`, or `CancellationError`).
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
