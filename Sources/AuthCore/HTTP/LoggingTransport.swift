import Logging

/// `--log-level debug`: one line per HTTP exchange — to an auth server or for `fetch` — with
/// the method, the URL without its query (`HTTPRequest.description`, which is where a secret
/// could sit), the status and the milliseconds it took:
/// `debug: POST https://sso.example.com/token → 200 (41 ms)`. Never headers or bodies.
/// A wrapper, so every transport (curl, URLSession, a test's fake) logs the same way.
public struct LoggingTransport: HTTPTransport {
    let inner: HTTPTransport
    let logger: Logger

    /// `transport` itself unless the logger shows debug lines: no clock reads for nothing.
    public static func wrapping(_ transport: HTTPTransport, logger: Logger) -> HTTPTransport {
        logger.level >= .debug ? LoggingTransport(inner: transport, logger: logger) : transport
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let clock = ContinuousClock()
        let start = clock.now
        func elapsed() -> String {
            let d = clock.now - start
            return "\(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) ms"
        }
        do {
            let response = try await inner.send(request)
            logger.debug("\(request) → \(response.status) (\(elapsed()))")
            return response
        } catch {
            logger.debug("\(request) → \(error is CancellationError ? "cancelled" : HTTPCalls.describe(error, url: request.url)) (\(elapsed()))")
            throw error
        }
    }
}
