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
                        for event in try parser.feed(piece) where event.event == "message" && !event.data.isEmpty {
                            if let value = try? JSONParser.parse(event.data) {
                                forward(value, raw: event.data)
                            } else {
                                log("mcp: an event of the server's GET stream is not JSON; dropped")
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    log("mcp: the server's GET stream broke off (\(error)); opening it again")
                }
                lastEventId = parser.lastEventId ?? lastEventId
                if let ms = parser.retryMilliseconds { retry = Double(ms) / 1000 }
            } catch {
                if Task.isCancelled { return }
                failures += 1
                log("mcp: the server's GET stream could not be opened: \(error)")
                if failures >= 3 { return }
            }
            try? await clock.sleep(for: max(0.05, min(retry, 60)))
        }
    }
}
