/// Why an HTTP exchange produced no response.
///
/// Messages come from the transport's own wording (host and a short reason),
/// never from headers, bodies or the full URL, which may carry secrets.
public enum HTTPTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No connection or the connection broke; the text names the host and why.
    case unreachable(String)
    /// The TLS handshake failed or the server's certificate was not accepted; the text names the host.
    /// Apart from `unreachable` because the fix differs: the server is there, its certificate
    /// (or a CA bundle, or a TLS-intercepting proxy) is what to look at.
    case tlsFailed(String)
    /// The request's timeout passed before the response was complete (or was not positive).
    case timedOut
    /// The response body exceeded the transport's limit and was dropped.
    case responseTooLarge
    /// The response's header section exceeded `limit` bytes (a limit of its own, apart from the body's).
    case headersTooLarge(limit: Int)
    /// Not a request the transport is willing to send: the URL is not an
    /// absolute http(s) URL that `Origin` accepts, the method is not a token,
    /// or a header contains characters that would split the request (CR, LF, NUL).
    case invalidURL

    public var description: String {
        switch self {
        case .unreachable(let reason): return "cannot reach \(reason)"
        case .timedOut: return "the request timed out"
        case .tlsFailed(let host): return "TLS handshake or certificate verification failed with \(host)"
        case .responseTooLarge: return "the response was too large"
        case .headersTooLarge(let limit): return "the response headers were larger than \(limit) bytes"
        case .invalidURL: return "the request is not a valid http or https request"
        }
    }
}
