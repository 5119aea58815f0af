import JSON

extension MCPBridge {
    /// After `initialize`: the GET stream of server-initiated messages, when the server offers one
    /// (`405`: it does not). A stream that ends is opened again — with `Last-Event-ID` when the
    /// server numbered its events, so nothing is lost or repeated — after the delay it asked for.
    func startListening() {
        lock.withLock {
            guard listener == nil, !closing else { return }
            if let version = protocolVersion, version >= MCPMessage.statelessRevision { return }  // no GET stream there
            listener = Task { [self] in await listen() }
        }
    }

    /// The pause before the stream is opened again: the server's `retry`, within bounds.
    static func pause(_ retry: Double) -> Double { max(0.05, min(retry, 60)) }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(Double(Int(value * 100)) / 100)
    }

    private func listen() async {
        var lastEventId: String?
        var retry = 1.0
        var failures = 0
        while !Task.isCancelled {
            var headers = [("Accept", "text/event-stream")]
            let (session, version) = lock.withLock { (sessionId, protocolVersion) }
            if let session { headers.append(("Mcp-Session-Id", session)) }
            if let version { headers.append(("MCP-Protocol-Version", version)) }
            if let lastEventId { headers.append(("Last-Event-ID", lastEventId)) }
            do {
                let stream = try await exchange(method: "GET", headers: headers, body: nil, timeout: 86_400)
                guard stream.status == 200, (stream.headers["content-type"] ?? "").lowercased().hasPrefix("text/event-stream") else {
                    await drain(stream)
                    if stream.status != 405 { log("mcp: the server's GET stream answered HTTP \(stream.status); not listening") }
                    return
                }
                failures = 0
                var parser = SSEParser()
                do {
                    for try await piece in stream.body {
                        for event in try parser.feed(piece) {
                            if let answer = answerForStatelessHost(event) { await posting(answer) } else { forwardStreamEvent(event) }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    log("mcp: the server's GET stream broke off: \(Self.clause(error)); opening it again")
                }
                lastEventId = parser.lastEventId ?? lastEventId
                if let ms = parser.retryMilliseconds { retry = Double(ms) / 1000 }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                let next = failures >= 3 ? "not trying again (requests and their answers go on without it)"
                    : "trying again in \(Self.seconds(Self.pause(retry))) s"
                log("mcp: the server's GET stream could not be opened: \(Self.clause(error)); \(next)")
                if failures >= 3 { return }
            }
            try? await clock.sleep(for: Self.pause(retry))
        }
    }

    /// A session server's request on its GET stream, which a stateless host cannot take (no request
    /// of the host's carries it): the bridge's answer in the host's stead — unless it is a URL
    /// elicitation the host cannot open, which the bridge opens (`forward`). Nil for anything else.
    private func answerForStatelessHost(_ event: SSEEvent) -> JSONValue? {
        guard case .sessionServer? = lock.withLock({ translation }), event.event == "message",
              let value = try? JSONParser.parse(event.data) else { return nil }
        if URLElicitation(request: value) != nil, !lock.withLock({ hostOpensURLs }) { return nil }
        return RevisionTranslation.refusalForStatelessHost(value)
    }

    /// An event of a GET stream (either transport's): a `message` event's JSON goes to the host;
    /// one that is not JSON is dropped with a line; other events are not MCP's.
    func forwardStreamEvent(_ event: SSEEvent) {
        guard event.event == "message", !event.data.isEmpty else { return }
        if let value = try? JSONParser.parse(event.data) {
            forward(value, raw: event.data)
        } else {
            log("mcp: an event of the server's GET stream is not JSON; dropped")
        }
    }
}
