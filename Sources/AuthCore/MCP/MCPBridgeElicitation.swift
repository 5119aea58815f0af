import JSON

/// Issue 33 item 5: URL-mode elicitation for hosts that cannot open a URL (URLElicitation.swift has
/// the rules and the spec's words). The bridge declares the mode to the server for every host; a
/// host that declared it gets the server's requests as they are, any other has them opened here —
/// in each revision pairing the bridge stands between: on a session server's streams (pass-through,
/// or held for a stateless host) and in a stateless server's `input_required` rounds. A stateless
/// host before a stateless server states its own capabilities in every request and is not translated.
extension MCPBridge {
    /// The host's first message said whether it opens URLs itself.
    func noteHost(capabilities: JSONValue?) {
        let opens = URLElicitation.declared(in: capabilities)
        lock.withLock { hostOpensURLs = opens }
    }

    /// A server message the bridge takes in the host's stead: a URL elicitation (answered from here
    /// on a task of its own, the stream read on meanwhile) or its completion notification, which a
    /// host that never saw the elicitation does not know. True when taken.
    func takesURLElicitation(_ value: JSONValue) -> Bool {
        switch URLElicitation.handling(value, hostOpensURLs: lock.withLock { hostOpensURLs }) {
        case .passThrough:
            return false
        case .openBeforeRetry(let elicitations):
            // The host gets the error as it is (it may retry); the pages it cannot open are opened here.
            inFlight { [self] in for elicitation in elicitations { _ = action(for: elicitation) } }
            return false
        case .dropCompletion:
            debug?("mcp: notifications/elicitation/complete (\(value["params"]?["elicitationId"]?.stringValue ?? "no id")) not passed on: the host did not declare URL elicitation; the bridge opened it")
            return true
        case .openHere:
            guard let elicitation = URLElicitation(request: value) else { return false }
            inFlight { [self] in await posting(elicitation.answer(action(for: elicitation))) }
            return true
        }
    }

    /// Runs `work` on a task in flight as the host's messages are, so that the end of input gives it their grace.
    private func inFlight(_ work: @escaping @Sendable () async -> Void) {
        lock.withLock {
            let key = nextTask
            nextTask += 1
            inFlight[key] = Task { [self] in
                await work()
                lock.withLock { inFlight[key] = nil }
            }
        }
    }

    /// A stateless server's input request, answered here when it is a URL elicitation the host cannot
    /// open (its result for `inputResponses`); nil when the host answers it.
    func ownResult(_ method: String, params: JSONValue?) -> JSONValue? {
        guard method == "elicitation/create", !lock.withLock({ hostOpensURLs }),
              let elicitation = URLElicitation(id: .null, params: params) else { return nil }
        return elicitation.result(action(for: elicitation))
    }

    /// Shows the elicitation (`openURL`): `accept` once a browser was opened, `cancel` when none
    /// could be (the URL is on stderr for whoever reads it), `decline` for a URL the agent refuses.
    private func action(for elicitation: URLElicitation) -> URLElicitation.Action {
        if let problem = elicitation.problem {
            log("mcp: the server asked to open a URL the agent refuses (\(problem)); declined")
            return .decline
        }
        return openURL(elicitation) ? .accept : .cancel
    }
}
