import AuthCore
import Foundation
import JSON
import Locking

/// A scripted OAuth server in process: an `HTTPTransport` to hand to `AuthService`, `HTTPCalls` or a
/// provider, so a test runs a flow without a socket or a process.
///
/// A request is answered, in this order, from the queue scripted for its URL path (answers are
/// served in order and the last one served repeats, so "the token endpoint answers X from now on"
/// is one line), else by the handler (for servers that compute their answer from the request),
/// else `404`. Every request is recorded, so a test can assert what was asked and how often.
/// One class for what were five fakes inside five test files (issue 21 item 5).
public final class FakeOAuthServer: HTTPTransport, Sendable {
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private struct Script {
        var queued: [String: [HTTPResponse]] = [:]
        var lastServed: [String: HTTPResponse] = [:]
        var requests: [HTTPRequest] = []
    }

    private let script = Locked(Script())
    private let handler: Handler?

    public init(handler: Handler? = nil) {
        self.handler = handler
    }

    /// Queues `response` for requests to `path`.
    public func answer(_ path: String, _ response: HTTPResponse) {
        script.withLock { $0.queued[path, default: []].append(response) }
    }

    /// Queues a response with `body` as text (JSON unless `headers` say otherwise) for requests to `path`.
    public func answer(_ path: String, _ status: Int, _ body: String, headers: [String: String] = ["Content-Type": "application/json"]) {
        answer(path, HTTPResponse(status: status, headers: headers, body: Array(body.utf8)))
    }

    /// Every request so far, in arrival order.
    public var requests: [HTTPRequest] { script.withLock { $0.requests } }

    /// How many requests went to `path`.
    public func count(_ path: String) -> Int {
        requests.filter { Self.path($0) == path }.count
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let path = Self.path(request)
        let scripted = script.withLock { script -> HTTPResponse? in
            script.requests.append(request)
            if var queue = script.queued[path], !queue.isEmpty {
                let first = queue.removeFirst()
                script.queued[path] = queue
                script.lastServed[path] = first
                return first
            }
            return script.lastServed[path]
        }
        if let scripted { return scripted }
        return try await handler?(request) ?? HTTPResponse(status: 404)
    }

    /// A JSON response, as token endpoints and metadata documents answer.
    public static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONSerializer.bytes(value))
    }

    private static func path(_ request: HTTPRequest) -> String { URL(string: request.url)?.path ?? "" }
}
