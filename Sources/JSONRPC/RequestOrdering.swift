import Locking

/// How a request is ordered against the requests that arrived before it,
/// declared per method (next to its descriptor) and run by the connection's
/// one `RequestScheduler` — so a script can pipe `login`, `sign`, `logout`
/// without waiting and read the answers in the order it asked.
///
/// Keys name what requests contend for (the auth methods use provider ids).
public enum RequestOrdering: Sendable, Hashable {
    /// Runs at once, beside anything.
    case free
    /// Reads `key`: waits for earlier `changes` of it; runs beside other `uses`.
    case uses(String)
    /// Changes `key`: waits for every earlier request of it, and later ones wait for it.
    case changes(String)
    /// Adds to `key` something its readers do not depend on (an interactive login's
    /// new account beside the ones they use): waits for every earlier request of it,
    /// and later `changes` wait for it, but later `uses` do not — so a request that
    /// can be answered now is not held back for as long as a person takes to approve.
    case adds(String)
}

/// A one-shot signal: tasks wait until it opens; once open it stays open.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Locked(State())

    func open() {
        let ready = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.isOpen = true
            defer { s.waiters = [] }
            return s.waiters
        }
        ready.forEach { $0.resume() }
    }

    var opened: Bool { state.withLock { $0.isOpen } }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.isOpen { return true }
                s.waiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Runs `RequestOrdering` for one connection. Requests are admitted on the
/// reader thread in arrival order; a request's gate opens once its answer is
/// queued for output, so the host sees it before anything a later request of
/// the same key causes (a login's answer before the logout's `userLoggedOut`).
final class RequestScheduler: Sendable {
    private struct Lane {
        /// The latest `changes` request not yet answered.
        var lastChange: Gate?
        /// `uses` (and `adds`) requests admitted since then that are still waiting or working.
        var uses: [Gate] = []
    }

    /// What an admitted request waits for, and the gate later requests wait on (if any yet).
    struct Admission {
        let waitFor: [Gate]
        let mine: Gate?
    }

    private let lanes = Locked([String: Lane]())
    /// The changes admitted that may still be unanswered, of any key. While there
    /// is none — nearly always — a `uses` runs at once, and `runsAtOnce` knows it
    /// without hashing its key.
    private let changes = Locked([Gate]())

    /// Admits the next request in arrival order. A `uses` request with nothing to
    /// wait for gets no gate here: most answer at once (`sign` from memory), and
    /// one that goes on working asks for its gate with `enterUse` before the next admission.
    func admit(_ ordering: RequestOrdering) -> Admission {
        switch ordering {
        case .free:
            return Admission(waitFor: [], mine: nil)
        case .uses(let key):
            return lanes.withLock { lanes -> Admission in
                guard let change = lanes[key]?.lastChange, !change.opened else { return Admission(waitFor: [], mine: nil) }
                let mine = Gate()
                lanes[key, default: Lane()].uses.append(mine)
                return Admission(waitFor: [change], mine: mine)
            }
        case .changes(let key):
            return lanes.withLock { lanes -> Admission in
                var lane = lanes[key] ?? Lane()
                let earlier = (lane.lastChange.map { [$0] } ?? []) + lane.uses
                let mine = Gate()
                changes.withLock { changes in
                    changes.removeAll { $0.opened }
                    changes.append(mine)
                }
                lane.lastChange = mine
                lane.uses = []
                lanes[key] = lane
                return Admission(waitFor: earlier.filter { !$0.opened }, mine: mine)
            }
        case .adds(let key):
            // Waited for like a `uses` (by later `changes` only), waiting like a `changes`.
            return lanes.withLock { lanes -> Admission in
                var lane = lanes[key] ?? Lane()
                let earlier = (lane.lastChange.map { [$0] } ?? []) + lane.uses
                let mine = Gate()
                lane.uses.removeAll { $0.opened }
                lane.uses.append(mine)
                lanes[key] = lane
                return Admission(waitFor: earlier.filter { !$0.opened }, mine: mine)
            }
        }
    }

    /// Whether `admit` would let a request ordered so run at once, asked without
    /// admitting it: for `free`, and for `uses` when no change of its key is
    /// unanswered — the admissions that leave nothing behind. Only the reader
    /// thread admits requests, so the answer holds until it admits the next one.
    func runsAtOnce(_ ordering: RequestOrdering) -> Bool {
        switch ordering {
        case .free: return true
        case .uses(let key):
            let pending = changes.withLock { changes -> Bool in
                if !changes.isEmpty { changes.removeAll { $0.opened } }
                return !changes.isEmpty
            }
            return !pending || lanes.withLock { $0[key]?.lastChange?.opened ?? true }
        case .changes, .adds: return false
        }
    }

    /// The gate of a `uses` request admitted without one that turned out to take
    /// a while: later `changes` of its key wait for it.
    func enterUse(_ ordering: RequestOrdering) -> Gate? {
        guard case .uses(let key) = ordering else { return nil }
        let mine = Gate()
        lanes.withLock { lanes in
            var lane = lanes[key] ?? Lane()
            lane.uses.removeAll { $0.opened }
            lane.uses.append(mine)
            lanes[key] = lane
        }
        return mine
    }
}
