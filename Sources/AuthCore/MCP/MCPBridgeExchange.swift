import Dispatch
import JSON
import Wire

extension MCPBridge {
    /// The most bytes of a JSON answer (or of a refused request's body) read.
    static let maxJSONBytes = 16 << 20

    /// POSTs one host message, once its lane has a place for it, and hands on what comes back;
    /// every request in it ends answered.
    func post(_ message: MCPMessage, body: [UInt8]) async {
        let ids = message.requestIds
        let lane = ids.isEmpty ? answerLane : requestLane
        let deadline = clock.deadline(after: options.timeout)
        guard await lane.enter(until: deadline) else {
            if Task.isCancelled { return }  // abandoned by the host, or the bridge is closing (which answers)
            fail(ids, "The request to the MCP server timed out waiting for one of the \(lane.limit) places in flight", data: ["reason": "requestFailed"])
            if ids.isEmpty { log("mcp: \(message.method ?? "an answer to the server") dropped: no place in flight within the timeout") }
            return
        }
        defer { lane.leave() }
        switch await way(for: message) {
        case .streamableHTTP: break
        case .sse(let endpoint): return await postOverSSE(message, body: body, to: endpoint, deadline: deadline)
        case .refused(let error): return failSending(message, error)
        }
        let remaining = max(0, clock.remaining(until: deadline))
        let stream: HTTPStream
        do {
            stream = try await exchange(method: "POST", headers: headers(for: message), body: body, timeout: max(0.001, remaining))
        } catch {
            return failSending(message, error)
        }
        if let endpoint = await fallback(after: stream.status) {
            await drain(stream)
            return await postOverSSE(message, body: body, to: endpoint, deadline: deadline)
        }
        let contentType = (stream.headers["content-type"] ?? "").lowercased()
        switch stream.status {
        case 200..<300:
            settle(.streamableHTTP)
            if message.method == "initialize" { adopt(stream.headers) }
            if contentType.hasPrefix("text/event-stream") {
                var lastEventId = await readEvents(stream, answering: ids)
                // A stream that ended before the answer, after numbered events: resumed with GET (2025-06-18 resumability).
                for _ in 0..<2 {
                    guard let after = lastEventId, lock.withLock({ ids.contains { pending.contains($0) } }) else { break }
                    lastEventId = await resume(after: after, answering: ids)
                }
            } else if contentType.hasPrefix("application/json") {
                await readJSON(stream, answering: ids)
            } else {
                await drain(stream)
                if !ids.isEmpty, stream.status != 202 {
                    fail(ids, "The MCP server answered HTTP \(stream.status) with \(contentType.isEmpty ? "no content type" : contentType), not JSON or an event stream",
                         data: ["reason": "requestFailed", "status": .int(Int64(stream.status))])
                }
            }
            if message.method == "initialize" { startListening() }
        case 404 where lock.withLock({ sessionId }) != nil && message.method != "initialize":
            await drain(stream)
            let ended = lock.withLock { () -> Bool in
                defer { sessionId = nil; listener?.cancel(); listener = nil }
                return sessionId != nil
            }
            if ended { log("mcp: the server ended the MCP session (404); the host must initialize again") }
            fail(ids, "The MCP session ended: the server no longer knows it; initialize again",
                 data: ["reason": "sessionEnded", "status": 404])
        default:
            // A refusal may carry the JSON-RPC error the server means (a 400 for a bad request).
            let bytes = await collect(stream, limit: 64 << 10)
            if let bytes, let value = try? JSONParser.parse(bytes), value["id"].map({ id in ids.contains(id) }) == true, value["error"] != nil {
                forward(value, raw: bytes)
            }
            if ids.isEmpty { log("mcp: \(message.method ?? "an answer to the server") refused: HTTP \(stream.status)") }
            fail(ids, "The MCP server answered HTTP \(stream.status)", data: ["reason": "requestFailed", "status": .int(Int64(stream.status))])
        }
        if !ids.isEmpty {
            fail(ids, "The MCP server ended its answer without a response to this request", data: ["reason": "requestFailed"])
        }
    }

    /// Answers the requests of a message that could not be sent (a failed login, an unreachable
    /// server) with the error; a notification that could not be sent is dropped with a line.
    func failSending(_ message: MCPMessage, _ error: Error) {
        guard let error = error as? AuthError else {
            return fail(message.requestIds, "The request to the MCP server failed: \(Self.clause(error))", data: ["reason": "requestFailed"])
        }
        fail(message.requestIds, error)
        if message.kind == .notification { log("mcp: \(message.method ?? "a notification") dropped: \(error.message)") }
    }

    /// The headers for `message`: the negotiated revision's, and the stateless revision's routing headers.
    func headers(for message: MCPMessage) -> [(String, String)] {
        var headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
        let (session, negotiated) = lock.withLock { (sessionId, protocolVersion) }
        if message.method != "initialize" {
            if let version = message.statedProtocolVersion ?? negotiated { headers.append(("MCP-Protocol-Version", version)) }
            if let session { headers.append(("Mcp-Session-Id", session)) }
        }
        if let version = message.statedProtocolVersion ?? negotiated, version >= MCPMessage.statelessRevision {
            headers += message.routingHeaders()
        }
        return headers
    }

    /// Keeps the session id the server gave (on `initialize`'s answer).
    func adopt(_ headers: [String: String]) {
        guard let id = headers["mcp-session-id"] else { return }
        lock.withLock { sessionId = id }
    }

    /// Sends with the agent's authorization through the one `Exchange`: after a 401 for a token sent,
    /// one refresh; after a 401 to an unsigned request, a login (the waiting messages wait for it);
    /// after `401 use_dpop_nonce`, a proof with that nonce (a refused proof is not a dead token: no
    /// refresh is spent on it); after a learned resource's `403 insufficient_scope`, a step-up. A
    /// refusal's body is not waited for: the bridge reads heads and streams. `target`: where the
    /// request goes (the HTTP+SSE transport's endpoint), signed as `url` is.
    func exchange(method: String, target: String? = nil, headers: [(String, String)], body: [UInt8]?, timeout: Double) async throws -> HTTPStream {
        let (authorizer, url) = (self.authorizer, self.url)
        let target = target ?? url
        var state = ExchangeState()
        let exchange = Exchange<Signature, HTTPStream>(
            carries: { signed in signed.map { $0.proof == nil ? .token : .provenToken } ?? .unsigned },
            sign: { $0?.headers ?? [] },
            send: { [self] signing in
                try await open(HTTPRequest(method: method, url: target, headers: headers + options.headers + signing, body: body, timeout: timeout))
            },
            head: { HTTPResponse(status: $0.status, headers: $0.headers) },
            keepNonce: { nonce in authorizer.keep(dpopNonce: nonce, url: target) },
            prove: { same in try await authorizer.signature(for: url, method: method, at: target) ?? same },
            // Not held open through a refresh or a login that may take minutes.
            setAside: { [self] stream in await drain(stream) },
            refresh: { rejected in try await authorizer.renewed(after: rejected, url: url, method: method, at: target) },
            logIn: { challenge in
                guard try await authorizer.logIn(url: url, challenge: challenge) else { throw AuthError.mcpLoginUncovered(url) }
                return try await authorizer.signature(for: url, method: method, at: target)
            },
            stepUp: { scopes, rejected in
                guard let next = try await authorizer.steppedUp(after: rejected, scopes: scopes, url: url, method: method, at: target) else {
                    throw AuthError.mcpScopeNotGranted(scopes)
                }
                return next
            })
        return try await exchange.run(try await authorizer.signature(for: url, method: method, at: target), state: &state).answer
    }

    /// Opens one attempt, a line at `--log-level debug` for it.
    private func open(_ request: HTTPRequest) async throws -> HTTPStream {
        let started = now()
        do {
            let stream = try await transport.open(request)
            debug?("\(request) → \(stream.status) (\(Int((now() - started) * 1000)) ms to the head)")
            return stream
        } catch let error as HTTPTransportError {
            debug?("\(request) → \(error) (\(Int((now() - started) * 1000)) ms)")
            throw AuthError.requestFailed(.mcpNotCompleted(HTTPCalls.describe(error, url: request.url)))
        }
    }

    /// Each event of an SSE answer goes to the host as it arrives. Returns the last event id when the
    /// stream ended (or broke) cleanly enough to be resumed from it.
    @discardableResult
    func readEvents(_ stream: HTTPStream, answering ids: [JSONValue]) async -> String? {
        var parser = SSEParser()
        do {
            for try await piece in stream.body {
                for event in try parser.feed(piece) where event.event == "message" && !event.data.isEmpty {
                    guard let value = try? JSONParser.parse(event.data) else {
                        fail(ids, "The MCP server's event stream carried an event that is not JSON", data: ["reason": "requestFailed"])
                        continue
                    }
                    // A server request the bridge takes is never held for a stateless host (answers are `forward`'s to take).
                    if value["method"] != nil, takesURLElicitation(value) { continue }
                    if ids.count == 1, await heldForStatelessHost(value, during: ids[0]) { continue }
                    forward(value, raw: event.data)
                }
            }
        } catch let malformed as SSEParser.Malformed {
            fail(ids, "The MCP server's event stream is malformed: \(malformed)", data: ["reason": "requestFailed"])
            return nil
        } catch {
            if parser.lastEventId != nil, !Task.isCancelled { return parser.lastEventId }
            fail(ids, "The MCP server's event stream broke off: \(Self.clause(error))", data: ["reason": "requestFailed"])
            return nil
        }
        return parser.lastEventId
    }

    /// The rest of a POST's event stream, asked for with `GET` and `Last-Event-ID`; nil when the
    /// server does not resume (then the request is answered with the error the caller gives).
    func resume(after lastEventId: String, answering ids: [JSONValue]) async -> String? {
        var headers = [("Accept", "text/event-stream"), ("Last-Event-ID", lastEventId)]
        let (session, version) = lock.withLock { (sessionId, protocolVersion) }
        if let session { headers.append(("Mcp-Session-Id", session)) }
        if let version { headers.append(("MCP-Protocol-Version", version)) }
        guard let stream = try? await exchange(method: "GET", headers: headers, body: nil, timeout: options.timeout) else { return nil }
        guard stream.status == 200, (stream.headers["content-type"] ?? "").lowercased().hasPrefix("text/event-stream") else {
            await drain(stream)
            return nil
        }
        let next = await readEvents(stream, answering: ids)
        return next == lastEventId ? nil : next
    }

    func readJSON(_ stream: HTTPStream, answering ids: [JSONValue]) async {
        guard let bytes = await collect(stream, limit: Self.maxJSONBytes) else {
            fail(ids, "The MCP server's JSON answer was cut off or larger than \(Self.maxJSONBytes) bytes", data: ["reason": "requestFailed"])
            return
        }
        guard let value = try? JSONParser.parse(bytes) else {
            fail(ids, "The MCP server's answer is not JSON (application/json that does not parse)", data: ["reason": "requestFailed"])
            return
        }
        forward(value, raw: bytes)
    }

    /// The whole body, or nil when it broke off or exceeds `limit`.
    func collect(_ stream: HTTPStream, limit: Int) async -> [UInt8]? {
        var bytes: [UInt8] = []
        do {
            for try await piece in stream.body {
                bytes += piece
                if bytes.count > limit { return nil }
            }
        } catch { return nil }
        return bytes
    }

    func drain(_ stream: HTTPStream) async { _ = await collect(stream, limit: 64 << 10) }
}
