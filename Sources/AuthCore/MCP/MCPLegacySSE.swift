import JSON
import Wire

/// `--transport`: which of MCP's HTTP transports the bridge speaks to the server — Streamable HTTP
/// (2025-03-26 on) or the deprecated HTTP+SSE transport of 2024-11-05, which old servers still
/// serve — and whether it tries the other after a first refusal, as mcp-remote's strategies do.
public enum MCPTransport: String, Sendable, CaseIterable {
    case httpOnly = "http-only", sseOnly = "sse-only", httpFirst = "http-first", sseFirst = "sse-first"

    public enum Kind: Sendable, Equatable { case streamableHTTP, sse }

    /// What is spoken before anything was tried: fixed for the `-only` strategies, nil (decided by
    /// the first exchange) for the `-first` ones.
    var settled: Kind? {
        switch self {
        case .httpOnly: return .streamableHTTP
        case .sseOnly: return .sse
        case .httpFirst, .sseFirst: return nil
        }
    }

    /// Whether the first attempt's HTTP `status` sends the bridge to the other transport: 404 or 405,
    /// mcp-remote's rule — a server of the other transport has no such resource or method at URL (a
    /// 2024-11-05 server takes no POST there; a Streamable HTTP server may offer no GET stream).
    /// Any other answer (a 401 is a login, a 400 or 5xx a failure) stays the answer.
    public func fallsBack(after status: Int) -> Bool {
        (self == .httpFirst || self == .sseFirst) && (status == 404 || status == 405)
    }
}

/// The HTTP+SSE transport of MCP 2024-11-05: a GET of URL opens an event stream whose first event,
/// `endpoint`, names where to POST the host's messages (answered `202 Accepted`); every message of
/// the server — answers, requests, notifications — comes as a `message` event on that stream.
/// The stream is the server's session: when it ends, the answers it still owed never come.
public enum MCPLegacySSE {
    /// The most seconds the bridge waits for the `endpoint` event once the stream is open.
    static let endpointWait = 30.0

    /// The URL an `endpoint` event's data names, relative to `url` or absolute; refused off `url`'s
    /// origin, because every POST there carries the agent's token for `url`.
    public static func endpoint(_ data: [UInt8], from url: String) -> Result<String, AuthError> {
        let reference = HTTPText.trimmingWhitespace(Substring(decoding: data, as: UTF8.self))
        guard !reference.isEmpty else { return .failure(.requestFailed(.mcpNoEndpoint("its endpoint event was empty"))) }
        guard let endpoint = RedirectRule.sameOrigin(reference, from: url) else {
            return .failure(.requestFailed(.mcpEndpointElsewhere(endpoint: reference, url: url)))
        }
        return .success(endpoint)
    }
}

extension MCPBridge {
    /// How one message goes to the server.
    enum Way { case streamableHTTP, sse(endpoint: String), refused(AuthError) }

    /// Opening the HTTP+SSE stream: its endpoint, or why not (with the GET's status when it answered one).
    enum Opening { case open(String), failed(AuthError, status: Int?) }

    /// The way of the next message: Streamable HTTP once settled on it (and first, for `http-first`);
    /// else the HTTP+SSE stream, opened when there is none (after one broke: a new session at the
    /// server, one GET per message at most). `sse-first`'s first GET answered 404/405 settles on
    /// Streamable HTTP.
    func way(for message: MCPMessage) async -> Way {
        let settled = lock.withLock { self.settled }
        if settled == .streamableHTTP || (settled == nil && options.transport != .sseFirst) { return .streamableHTTP }
        switch await openedSSE(replaying: message.method != "initialize") {
        case .open(let endpoint):
            settle(.sse)
            return .sse(endpoint: endpoint)
        case .failed(let error, let status):
            guard settled == nil, let status, options.transport.fallsBack(after: status) else { return .refused(error) }
            settle(.streamableHTTP)
            debug?("mcp: \(url) answered GET with HTTP \(status): speaking Streamable HTTP")
            return .streamableHTTP
        }
    }

    /// `http-first`: the first POST answered 404/405 tries the HTTP+SSE stream at URL; its endpoint
    /// when one opened (settled on it), else nil (settled on Streamable HTTP, the answer stands).
    func fallback(after status: Int) async -> String? {
        guard lock.withLock({ settled == nil }), options.transport.fallsBack(after: status) else { return nil }
        switch await openedSSE(replaying: false) {
        case .open(let endpoint):
            settle(.sse)
            debug?("mcp: \(url) answered POST with HTTP \(status): speaking the HTTP+SSE transport of 2024-11-05")
            return endpoint
        case .failed(let error, _):
            settle(.streamableHTTP)
            debug?("mcp: \(url) answered POST with HTTP \(status) and offers no HTTP+SSE stream either (\(Self.clause(error)))")
            return nil
        }
    }

    func settle(_ kind: MCPTransport.Kind) { lock.withLock { if settled == nil { settled = kind } } }

    /// POSTs one message to the endpoint and waits (within `deadline`) for the answers to its
    /// requests, which come on the stream; a stream that ends first answers them with an error.
    func postOverSSE(_ message: MCPMessage, body: [UInt8], to endpoint: String, deadline: Deadline) async {
        let ids = message.requestIds
        if message.method == "initialize" { lock.withLock { sseInitialize = message.value } }
        let stream: HTTPStream
        do {
            stream = try await exchange(method: "POST", target: endpoint, headers: [("Content-Type", "application/json")], body: body,
                                        timeout: max(0.001, clock.remaining(until: deadline)))
        } catch {
            return failSending(message, error)
        }
        await drain(stream)
        guard (200..<300).contains(stream.status) else {
            if ids.isEmpty { log("mcp: \(message.method ?? "an answer to the server") refused: HTTP \(stream.status)") }
            return fail(ids, "The MCP server answered HTTP \(stream.status)", data: ["reason": "requestFailed", "status": .int(Int64(stream.status))])
        }
        guard !ids.isEmpty else { return }
        let outcome = try? await clock.poll(until: deadline) {
            lock.withLock { () -> Bool? in
                if ids.allSatisfy({ !pending.contains($0) || captured[$0] != nil }) { return true }
                guard case .success(endpoint)? = sse else { return false }
                return nil
            }
        }
        if Task.isCancelled { return }  // abandoned by the host, or the bridge is closing (which answers)
        switch outcome {
        case true?: return
        case false?:
            fail(ids, "The MCP server's HTTP+SSE stream ended before the answer: its session with the server is over (the next message opens a new one)",
                 data: ["reason": "requestFailed"])
        default:
            fail(ids, "The MCP server did not answer within the timeout (on its HTTP+SSE stream)", data: ["reason": "requestFailed"])
        }
    }

    /// The stream's endpoint, opening the stream when there is none — one GET for every message
    /// waiting meanwhile.
    private func openedSSE(replaying: Bool) async -> Opening {
        enum Next { case open(String), wait(Task<Opening, Never>) }
        let next = lock.withLock { () -> Next in
            if case .success(let endpoint)? = sse { return .open(endpoint) }
            if let opening = sseOpening { return .wait(opening) }
            let opening = Task { [self] in await openSSE(replaying: replaying) }
            sseOpening = opening
            return .wait(opening)
        }
        switch next {
        case .open(let endpoint):
            return .open(endpoint)
        case .wait(let task):
            let opening = await task.value
            lock.withLock { if sseOpening == task { sseOpening = nil } }
            return opening
        }
    }

    /// GETs URL for the event stream and waits, bounded, for its `endpoint` event; a stream opened
    /// again after one broke replays the host's `initialize` first (`replaying`).
    private func openSSE(replaying: Bool) async -> Opening {
        let stream: HTTPStream
        do {
            stream = try await exchange(method: "GET", headers: [("Accept", "text/event-stream")], body: nil, timeout: 86_400)
        } catch let error as AuthError {
            return .failed(error, status: nil)
        } catch {
            return .failed(.requestFailed(.mcpNotCompleted(Self.clause(error))), status: nil)
        }
        let contentType = (stream.headers["content-type"] ?? "").lowercased()
        guard stream.status == 200, contentType.hasPrefix("text/event-stream") else {
            await drain(stream)
            let what = stream.status == 200 ? "\(contentType.isEmpty ? "no content type" : contentType), not an event stream" : "HTTP \(stream.status)"
            return .failed(.requestFailed(.mcpNoEndpoint("its GET of \(url) answered \(what)")), status: stream.status)
        }
        lock.withLock {
            sse = nil
            listener?.cancel()
            listener = Task { [self] in await readSSE(stream) }
        }
        let wait = min(options.timeout, MCPLegacySSE.endpointWait)
        let found = try? await clock.poll(until: clock.deadline(after: wait)) { lock.withLock { sse } }
        switch found {
        case .success(let endpoint)?:
            guard replaying, let initialize = lock.withLock({ sseInitialize }) else { return .open(endpoint) }
            return await reinitialize(initialize, at: endpoint)
        case .failure(let error)?:
            return .failed(error, status: nil)
        case nil:
            lock.withLock { listener?.cancel() }
            return .failed(.requestFailed(.mcpNoEndpoint("no endpoint event within \(Self.seconds(wait)) s")), status: nil)
        }
    }

    /// Reads the stream: its `endpoint` event, then every `message` event to the host. When it ends,
    /// the endpoint goes with it (the server's session is over) and the requests waiting are answered.
    private func readSSE(_ stream: HTTPStream) async {
        var parser = SSEParser()
        var endpoint: String?
        var why = "the server ended it"
        do {
            for try await piece in stream.body {
                for event in try parser.feed(piece) {
                    if endpoint != nil { forwardStreamEvent(event); continue }
                    guard event.event == "endpoint" else {
                        log("mcp: the server's HTTP+SSE stream sent a \(event.event) event before its endpoint; dropped")
                        continue
                    }
                    let resolved = MCPLegacySSE.endpoint(event.data, from: url)
                    lock.withLock { sse = resolved }
                    guard case .success(let named) = resolved else { return }
                    endpoint = named
                }
            }
        } catch let malformed as SSEParser.Malformed {
            why = "it is malformed: \(malformed)"
        } catch {
            why = "it broke off: \(Self.clause(error))"
        }
        if Task.isCancelled { return }
        lock.withLock { sse = .failure(.requestFailed(.mcpNoEndpoint("the stream ended (\(why))"))) }
        if endpoint != nil { log("mcp: the server's HTTP+SSE stream ended (\(why)): its session is over; the next message opens a new one") }
    }

    /// A new stream is a new session at the server: the host's `initialize` is sent again (its
    /// answer kept by the bridge), then `notifications/initialized`, so the host's next messages find
    /// the session they expect.
    private func reinitialize(_ initialize: JSONValue, at endpoint: String) async -> Opening {
        let id: JSONValue = lock.withLock {
            nextAsk += 1
            let id = JSONValue.string("auth-agent-reinitialize-\(nextAsk)")
            pending.insert(id)
            capturing.insert(id)
            return id
        }
        var request = initialize.objectValue ?? [:]
        request["id"] = id
        await postOverSSE(MCPMessage(.object(request))!, body: JSONSerializer.bytes(.object(request)), to: endpoint,
                          deadline: clock.deadline(after: options.timeout))
        let answer = lock.withLock { () -> JSONValue? in
            capturing.remove(id)
            pending.remove(id)
            return captured.removeValue(forKey: id)
        }
        guard answer?["result"] != nil else {
            let why = answer?["error"]?["message"]?.stringValue ?? "no answer"
            return .failed(.requestFailed(.mcpNoEndpoint("the new session refused initialize (\(why))")), status: nil)
        }
        let initialized: JSONValue = ["jsonrpc": "2.0", "method": "notifications/initialized"]
        await postOverSSE(MCPMessage(initialized)!, body: JSONSerializer.bytes(initialized), to: endpoint, deadline: clock.deadline(after: options.timeout))
        return .open(endpoint)
    }
}
