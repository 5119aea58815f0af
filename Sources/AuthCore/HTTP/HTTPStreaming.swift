/// An HTTP response whose body is read as it arrives: an SSE stream (MCP's Streamable
/// HTTP answers) must reach its reader event by event, not when the server closes it.
public struct HTTPStream: Sendable {
    public let status: Int
    /// Lowercased names, as in `HTTPResponse`.
    public let headers: [String: String]
    /// The body in pieces as they come; ends when the server ends it, throws when the
    /// connection breaks or the deadline passes. Ending the iteration early ends the transfer.
    public let body: AsyncThrowingStream<[UInt8], Error>

    public init(status: Int, headers: [String: String], body: AsyncThrowingStream<[UInt8], Error>) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A transport that can hand over a body incrementally. Every `HTTPTransport` can, in
/// one piece (the scripted transports of the tests, `URLSessionTransport`); `CurlTransport`
/// streams for real.
public protocol HTTPStreamingTransport: HTTPTransport {
    /// Sends `request` and returns once the status and headers are in; `request.timeout`
    /// bounds the whole exchange, `request.maxResponseBytes` is not applied (the reader bounds what it keeps).
    func open(_ request: HTTPRequest) async throws -> HTTPStream
}

extension HTTPTransport {
    /// The whole response as one piece: for transports that cannot stream.
    public func openWhole(_ request: HTTPRequest) async throws -> HTTPStream {
        let response = try await send(request)
        let body = response.body
        return HTTPStream(status: response.status, headers: response.headers, body: AsyncThrowingStream { continuation in
            if !body.isEmpty { continuation.yield(body) }
            continuation.finish()
        })
    }
}

#if !os(Linux)
extension URLSessionTransport: HTTPStreamingTransport {
    public func open(_ request: HTTPRequest) async throws -> HTTPStream { try await openWhole(request) }
}
#endif
