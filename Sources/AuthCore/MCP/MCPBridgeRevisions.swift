import JSON

/// Issue 33 item 1: the bridge learns the host's revision from its first message and the server's
/// from the answer to it, and translates when they differ (RevisionTranslation.swift has the
/// message-by-message rules). The host's first message goes to the server as it is, so host and
/// server of one revision pass through with no exchange added; only a refusal that names the
/// other era (or `--protocol-version`) makes the bridge ask the server the other way.
extension MCPBridge {
    /// The most `input_required` rounds one request of the host may take (the SDKs' limit).
    static let maxInputRounds = 10

    /// One message of the host, by what the bridge learned of both sides.
    func handle(_ message: MCPMessage, body: [UInt8]) async {
        let mode = lock.withLock { translation }
        switch (message.method, mode) {
        case ("initialize"?, _): await open(message, body: body)
        case ("server/discover"?, nil): await discover(message, body: body)
        case (_, nil): await post(message, body: body)
        case (_, .statelessServer(let host)?): await toStatelessServer(message, host: host)
        case (_, .sessionServer(let discovered)?): await toSessionServer(message, discovered: discovered)
        }
    }

    /// Sends `request` under the id of a host's request still owed an answer, and returns the
    /// server's answer (or the error the bridge would have written) instead of writing it; nil when
    /// the host abandoned the request. Notifications on its stream still reach the host. `body`:
    /// the host's own bytes, when `request` is the host's message unchanged.
    func call(_ request: JSONValue, body: [UInt8]? = nil) async -> JSONValue? {
        guard let id = request["id"], let message = MCPMessage(request), lock.withLock({ pending.contains(id) }) else { return nil }
        lock.withLock { _ = capturing.insert(id) }
        await post(message, body: body ?? JSONSerializer.bytes(request))
        return lock.withLock {
            capturing.remove(id)
            return captured.removeValue(forKey: id)
        }
    }

    /// Writes the answer to a host's request that is still owed one.
    func deliver(_ answer: JSONValue?) {
        guard let answer, let id = answer["id"], lock.withLock({ pending.remove(id) != nil }) else { return }
        write(answer)
    }

    /// Sends the bridge's own message (an answer in the host's stead, a translated notification).
    func posting(_ value: JSONValue) async {
        guard let message = MCPMessage(value) else { return }
        await post(message, body: JSONSerializer.bytes(value))
    }

    // MARK: The host's first message

    /// The host's `initialize`: to the server (at the pinned revision), unless the server refuses
    /// the handshake and answers `server/discover` instead — then the bridge answers `initialize`
    /// itself and stands in for the session from then on.
    private func open(_ message: MCPMessage, body: [UInt8]) async {
        guard let id = message.value["id"] else { return await post(message, body: body) }
        noteHost(capabilities: message.value["params"]?["capabilities"])
        let pin = options.protocolVersion
        var refusal: JSONValue?
        if pin.map(RevisionTranslation.isStateless) != true {
            let offered = URLElicitation.declaringInInitialize(RevisionTranslation.offering(message.value, version: pin))
            let answer = await call(offered, body: offered == message.value ? body : nil)
            guard let answer, pin == nil, RevisionTranslation.invitesOtherEra(answer) else { return deliver(answer) }
            refusal = answer
        }
        let host = RevisionTranslation.hostSession(from: message.value)
        guard let discovered = await call(RevisionTranslation.discoverRequest(id: id, for: host)) else { return }
        guard RevisionTranslation.speaksStateless(discovered) else { return deliver(refusal ?? discovered) }
        lock.withLock {
            translation = .statelessServer(host)
            protocolVersion = MCPMessage.statelessRevision
        }
        deliver(RevisionTranslation.initializeResult(id: id, discovered: discovered["result"] ?? [:],
                                                     hostVersion: message.value["params"]?["protocolVersion"]?.stringValue))
    }

    /// A stateless host's first `server/discover`: to the server, unless it refuses it as a
    /// session-based server would (or `--protocol-version` names a session revision) — then the
    /// bridge runs `initialize` once, keeps the session and answers `server/discover` from it.
    private func discover(_ message: MCPMessage, body: [UInt8]) async {
        guard let id = message.value["id"] else { return await post(message, body: body) }
        noteHost(capabilities: message.value["params"]?["_meta"]?[RevisionTranslation.capabilitiesMetaKey])
        let pin = options.protocolVersion
        var refusal: JSONValue?
        if pin.map(RevisionTranslation.isStateless) != false {
            let answer = await call(message.value, body: body)
            guard let answer, pin == nil, RevisionTranslation.invitesOtherEra(answer) else { return deliver(answer) }
            refusal = answer
        }
        let version = pin ?? RevisionTranslation.sessionRevisions.last!
        guard let initialized = await call(RevisionTranslation.initializeRequest(id: id, version: version, from: message.value)) else { return }
        guard initialized["result"] != nil else { return deliver(refusal ?? initialized) }
        let discovered = RevisionTranslation.discoverResult(initialized: initialized)
        lock.withLock { translation = .sessionServer(discovered: discovered) }
        await posting(["jsonrpc": "2.0", "method": "notifications/initialized"])
        deliver(["jsonrpc": "2.0", "id": id, "result": discovered])
    }

    // MARK: A session host before a stateless server

    private func toStatelessServer(_ message: MCPMessage, host: RevisionTranslation.HostSession) async {
        switch message.kind {
        case .response:
            // The host's answer to what the bridge asked it in the server's stead.
            guard let id = message.value["id"] else { return }
            lock.withLock { if asking.remove(id) != nil { hostAnswers[id] = message.value } }
        case .notification:
            // `notifications/initialized` goes nowhere: the stateless revision has no notifications
            // from the host (a cancellation closes the request's stream: `abandons`).
            return
        case .batch:
            fail(message.requestIds, code: -32600, "A batch cannot reach a 2026-07-28 server, which has none; send its messages one by one",
                 data: ["reason": "requestFailed"])
        case .request:
            guard let id = message.value["id"] else { return }
            switch message.method {
            case "ping":
                deliver(["jsonrpc": "2.0", "id": id, "result": [:]])
            case "logging/setLevel":
                // Gone in the stateless revision: the level goes into each later request's `_meta`.
                lock.withLock {
                    guard case .statelessServer(var kept)? = translation else { return }
                    kept.logLevel = message.value["params"]?["level"]?.stringValue
                    translation = .statelessServer(kept)
                }
                deliver(["jsonrpc": "2.0", "id": id, "result": [:]])
            default:
                await roundTrips(RevisionTranslation.stateless(message.value, for: host), id: id)
            }
        }
    }

    /// One request to a stateless server through its `input_required` rounds: each input request
    /// becomes the server-to-host request of the session revisions, and the host's answers go into
    /// the retried request.
    private func roundTrips(_ first: JSONValue, id: JSONValue) async {
        var request = first
        for _ in 0..<Self.maxInputRounds {
            guard let answer = await call(request) else { return }
            guard let inputs = RevisionTranslation.inputRequests(answer) else { return deliver(RevisionTranslation.sessionAnswer(answer)) }
            var responses = JSONObject()
            for input in inputs {
                if let own = ownResult(input.method, params: input.params) {
                    responses[input.key] = own
                    continue
                }
                guard let response = await ask(input.method, params: input.params) else {
                    if !Task.isCancelled { fail([id], "The host did not answer the server's \(input.method) within the timeout", data: ["reason": "requestFailed"]) }
                    return
                }
                if let error = response["error"] { return deliver(["jsonrpc": "2.0", "id": id, "error": error]) }
                responses[input.key] = response["result"] ?? [:]
            }
            request = RevisionTranslation.retried(request, responses: responses, state: answer["result"]?["requestState"])
        }
        fail([id], "The MCP server asked for input more than \(Self.maxInputRounds) times for one request", data: ["reason": "requestFailed"])
    }

    /// Sends the host a request in the server's stead and waits (bounded) for its answer.
    private func ask(_ method: String, params: JSONValue?) async -> JSONValue? {
        let id: JSONValue = lock.withLock {
            nextAsk += 1
            let id = JSONValue.string("auth-agent-input-\(nextAsk)")
            asking.insert(id)
            return id
        }
        write(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": params ?? [:]])
        let answer = try? await clock.poll(until: clock.deadline(after: options.timeout)) { lock.withLock { hostAnswers.removeValue(forKey: id) } }
        lock.withLock { _ = asking.remove(id) }
        return answer ?? nil
    }

    // MARK: A stateless host before a session-based server

    private func toSessionServer(_ message: MCPMessage, discovered: JSONValue) async {
        let value = RevisionTranslation.withoutStatelessMeta(message.value)
        guard message.kind == .request, let id = value["id"] else {
            return await posting(RevisionTranslation.cancellation(value, answeredAs: lock.withLock { answeredAs }))
        }
        if message.method == "server/discover" { return deliver(["jsonrpc": "2.0", "id": id, "result": discovered]) }
        // The retry of a request whose stream holds a server request: it answers that request, and
        // the held request's answer is this one's (`heldForStatelessHost`).
        if let token = value["params"]?["requestState"]?.stringValue,
           lock.withLock({ () -> Bool in
               guard holding.contains(token) else { return false }
               retries[token] = value
               return true
           }) { return }
        guard let answer = await call(value) else { return }
        let hostId = lock.withLock { () -> JSONValue? in
            let early = answeredEarly.remove(id) != nil
            guard let latest = answeredAs.removeValue(forKey: id) else {
                // Answered `input_required`, never retried: the host is owed nothing more for it.
                if early { pending.remove(id) }
                return early ? nil : id
            }
            pending.remove(id)
            return latest
        }
        guard let hostId else { return }
        deliver(RevisionTranslation.statelessAnswer(RevisionTranslation.answering(answer, as: hostId), method: message.method))
    }

    /// A session server's request to the host (an elicitation, a sampling, the roots) on the stream
    /// of a stateless host's request, which cannot take it: the host's request is answered
    /// `input_required` with it, the stream held open until the host retries with the answer, which
    /// goes to the server; the stream's final answer then answers the retry. True when held.
    func heldForStatelessHost(_ value: JSONValue, during request: JSONValue) async -> Bool {
        guard let method = value["method"]?.stringValue, let askId = value["id"], RevisionTranslation.inputMethods.contains(method),
              case .sessionServer? = lock.withLock({ translation }) else { return false }
        let (token, hostId): (String, JSONValue) = lock.withLock {
            nextAsk += 1
            let token = "auth-agent-held-\(nextAsk)"
            holding.insert(token)
            // A retry answered `input_required` again is owed nothing more; the held request's id stays owed the final answer.
            let hostId = answeredAs[request] ?? request
            if hostId != request { pending.remove(hostId) } else { answeredEarly.insert(request) }
            return (token, hostId)
        }
        write(RevisionTranslation.inputRequired(id: hostId, key: token, request: value))
        let retry = try? await clock.poll(until: clock.deadline(after: options.timeout)) { lock.withLock { retries.removeValue(forKey: token) } }
        lock.withLock { _ = holding.remove(token) }
        guard let retry = retry ?? nil, let retryId = retry["id"] else {
            await posting(MCPMessage.error(id: askId, code: -32603, message: "The host did not answer within the bridge's timeout"))
            return true
        }
        lock.withLock { answeredAs[request] = retryId }
        let response = retry["params"]?["inputResponses"]?[token]
        await posting(response.map { ["jsonrpc": "2.0", "id": askId, "result": $0] }
                      ?? MCPMessage.error(id: askId, code: -32603, message: "The host retried without an answer to \(method)"))
        return true
    }
}
