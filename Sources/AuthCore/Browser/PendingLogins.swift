import JSON
import Locking

/// A waiting browser login's other way in: the redirect URL pasted back by the person,
/// for a browser that cannot reach the loopback listener (another machine, a container).
/// The terminal login hands what is typed to `complete`; the protocol's `completeLogin`
/// goes through `PendingLogins`.
public struct RedirectPaste: Sendable {
    let listener: LoopbackRedirectListener

    /// Finishes the login with `url`; nil when taken, else why not (the login keeps waiting).
    public func complete(_ url: String) -> String? {
        switch listener.paste(url) {
        case .accepted: return nil
        case .notARedirect: return PendingLogins.Rejection.notARedirect.message
        case .wrongState: return PendingLogins.Rejection.wrongState.message
        case .notWaiting: return PendingLogins.Rejection.used.message
        }
    }
}

/// The browser logins of one agent waiting for their redirect, by the id of the `login`
/// request that started each: `completeLogin` may come on any connection of the agent
/// (a socket agent's, or the forward socket's), where request ids are not unique — the
/// URL's `state` picks the login among those with that id.
public final class PendingLogins: Sendable {
    private struct Entry: Sendable {
        let requestId: JSONValue
        let paste: RedirectPaste
        /// Where the login was started: a forward socket completes only its own.
        let door: Door
    }

    private let entries = Locked<[Entry]>([])
    /// The `state`s of URLs that finished a login, so a second paste says so (the last few).
    private let used = Locked<[String]>([])
    private static let usedKept = 64

    public init() {}

    /// Why `completeLogin` refused a URL (-32602); the login it named keeps waiting.
    public enum Rejection: Error, Equatable {
        case unknownRequest
        case notARedirect
        case wrongState
        case used
        /// A forward socket named a login started at another door (1015 rather than -32602).
        case otherDoor

        public var message: String {
            switch self {
            case .unknownRequest: return "no browser login waits under this requestId"
            case .notARedirect:
                return "not the address the login redirects to: paste the whole URL the browser ended at, http://127.0.0.1:PORT/callback?code=…&state=… (a bare code carries no state and is not accepted)"
            case .wrongState: return "the redirect URL's state does not match the login's: it belongs to another login"
            case .used: return "this redirect URL was already used"
            case .otherDoor: return AuthError.notYourLogin().message
            }
        }
    }

    func add(requestId: JSONValue, door: Door, _ paste: RedirectPaste) {
        entries.withLock { entries in
            entries.removeAll { !$0.paste.listener.isWaiting }
            entries.append(Entry(requestId: requestId, paste: paste, door: door))
        }
    }

    /// Hands `redirectURL` to the login `requestId` names; throws when no login took it.
    /// From a forward socket, only logins started at a forward socket are candidates: the
    /// laptop's own login is not the remote side's to finish with a redirect of its choosing.
    public func complete(requestId: JSONValue, redirectURL: String, door: Door = .host) throws(Rejection) {
        let state = LoopbackRedirectListener.pastedQuery(redirectURL)?["state"]
        if let state, used.current.contains(state) { throw .used }
        let candidates = entries.withLock { entries in
            entries.removeAll { !$0.paste.listener.isWaiting }
            return entries.filter { $0.requestId == requestId }
        }
        guard !candidates.isEmpty else { throw .unknownRequest }
        let reachable = door == .host ? candidates : candidates.filter { $0.door != .host }
        guard !reachable.isEmpty else { throw .otherDoor }
        var outcomes: [LoopbackRedirectListener.PasteOutcome] = []
        for candidate in reachable {
            let outcome = candidate.paste.listener.paste(redirectURL)
            if outcome == .accepted {
                if let state { used.withLock { $0 = Array(($0 + [state]).suffix(Self.usedKept)) } }
                return
            }
            outcomes.append(outcome)
        }
        if outcomes.contains(.notWaiting) { throw .used }
        throw outcomes.allSatisfy { $0 == .notARedirect } ? .notARedirect : .wrongState
    }
}
