import Locking

/// At most `limit` transfers at once; the others wait their turn in arrival order,
/// each no longer than its own deadline.
///
/// Why: every transfer has a thread of its own (a transfer blocks in libcurl), so a
/// host that parks hundreds of `fetch`es on a slow API would otherwise cost hundreds
/// of threads. Only `HTTPRequest.Lane.resource` goes through a lane; auth-server calls
/// never wait for one, so a login or a refresh is never queued behind a host's requests.
/// The wait for a place is the core's own, so its deadline is on the `Clock`.
final class TransferLane: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Bool, Never>
        /// Ends the wait at its deadline; cancelled once the waiter has a place.
        var timer: Task<Void, Never>?
    }

    private struct State {
        var running = 0
        var lastId: UInt64 = 0
        var waiting: [Waiter] = []
    }

    let limit: Int
    private let clock: Clock
    private let state = Locked(State())

    init(limit: Int, clock: Clock) {
        self.limit = max(1, limit)
        self.clock = clock
    }

    /// True once the caller holds a place (and must `leave()`); false when `deadline`
    /// passed or the task was cancelled first.
    func enter(until deadline: Deadline) async -> Bool {
        let id = state.withLock { s -> UInt64? in
            if s.running < limit {
                s.running += 1
                return nil
            }
            s.lastId += 1
            return s.lastId
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let admitted = state.withLock { s -> Bool in
                    if s.running < limit {  // a place opened since the first look
                        s.running += 1
                        return true
                    }
                    s.waiting.append(Waiter(id: id, continuation: continuation))
                    return false
                }
                if admitted { return continuation.resume(returning: true) }
                // A cancellation that came before the waiter was listed found nothing to end.
                if Task.isCancelled { return giveUp(id) }
                let timer = Task { [self, clock] in
                    guard (try? await clock.sleep(until: deadline)) != nil else { return }
                    giveUp(id)
                }
                state.withLock { s in
                    if let i = s.waiting.firstIndex(where: { $0.id == id }) { s.waiting[i].timer = timer } else { timer.cancel() }
                }
            }
        } onCancel: {
            giveUp(id)
        }
    }

    /// Hands the caller's place to the longest waiting transfer, if any.
    func leave() {
        let next = state.withLock { s -> Waiter? in
            if s.waiting.isEmpty {
                s.running -= 1
                return nil
            }
            return s.waiting.removeFirst()
        }
        next?.timer?.cancel()
        next?.continuation.resume(returning: true)
    }

    private func giveUp(_ id: UInt64) {
        let waiter = state.withLock { s -> Waiter? in
            guard let index = s.waiting.firstIndex(where: { $0.id == id }) else { return nil }
            return s.waiting.remove(at: index)
        }
        waiter?.timer?.cancel()
        waiter?.continuation.resume(returning: false)
    }
}
