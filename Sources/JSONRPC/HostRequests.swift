import JSON
import Locking

/// Why a request the agent sent the host (`RPCConnection.request`) got no answer.
public enum HostRequestFailure: Error, Sendable, Equatable {
    /// No answer within the request's timeout.
    case timedOut
    /// The host went first — end of input, or its `exit` — and no answer can come any more.
    case closed
}

/// The requests the agent sent one host, waiting for their answers by id.
///
/// Every wait ends once: with the host's answer, at the deadline, when the host goes (end of
/// input, `exit`), or when the waiting task is cancelled — whichever removes the entry first
/// resumes it.
final class HostRequests: Sendable {
    private struct Waiting {
        let continuation: CheckedContinuation<JSONValue, any Error>
        var deadline: Task<Void, Never>?
    }

    private struct State {
        var next = 0
        var waiting: [String: Waiting] = [:]
        /// Set once the host went: later requests fail at once.
        var closed = false
    }

    private let state = Locked(State())

    /// Sends a request through `write` under a fresh id and waits for its answer.
    func send(timeout: Double, _ write: (JSONValue) -> Void) async throws -> JSONValue {
        let id = state.withLock { s -> String in
            s.next += 1
            return "agent-\(s.next)"
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<JSONValue, any Error>) in
                let closed = state.withLock { s -> Bool in
                    if !s.closed { s.waiting[id] = Waiting(continuation: c) }
                    return s.closed
                }
                if closed {
                    c.resume(throwing: HostRequestFailure.closed)
                    return
                }
                if Task.isCancelled {  // cancelled before it was waiting, so `onCancel` found nothing
                    resolve(id, .failure(CancellationError()))
                    return
                }
                let deadline = Task { [weak self] in
                    try? await Task.sleep(nanoseconds: UInt64(max(timeout, 0) * 1e9))
                    if !Task.isCancelled { self?.resolve(id, .failure(HostRequestFailure.timedOut)) }
                }
                state.withLock { s in
                    if s.waiting[id] != nil { s.waiting[id]!.deadline = deadline } else { deadline.cancel() }
                }
                write(.string(id))
            }
        } onCancel: {
            resolve(id, .failure(CancellationError()))
        }
    }

    /// Hands the host's answer to the request it names; false when none waits under that id
    /// (not one of the agent's, or answered, timed out or cancelled already).
    func answer(_ id: JSONValue, result: JSONValue?, error: JSONValue?) -> Bool {
        guard case .string(let key) = id else { return false }
        if let error {
            return resolve(key, .failure(Self.rpcError(error)))
        }
        return resolve(key, .success(result ?? .null))
    }

    /// The host went: fails every waiting request, and every later one, with `.closed`.
    func closeAll() {
        let all = state.withLock { s -> [Waiting] in
            s.closed = true
            defer { s.waiting.removeAll() }
            return Array(s.waiting.values)
        }
        for waiting in all {
            waiting.deadline?.cancel()
            waiting.continuation.resume(throwing: HostRequestFailure.closed)
        }
    }

    @discardableResult
    private func resolve(_ id: String, _ outcome: Result<JSONValue, any Error>) -> Bool {
        guard let waiting = state.withLock({ $0.waiting.removeValue(forKey: id) }) else { return false }
        waiting.deadline?.cancel()
        waiting.continuation.resume(with: outcome)
        return true
    }

    /// The host's error object as an `RPCError`; one that is not a JSON-RPC error object is reported as such.
    private static func rpcError(_ error: JSONValue) -> RPCError {
        guard case .object(let o) = error, let code = o["code"]?.intValue, case .string(let message)? = o["message"] else {
            return RPCError(code: -32603, message: "the host answered with an error that is not a JSON-RPC error object", data: error)
        }
        return RPCError(code: Int(code), message: message, data: o["data"])
    }
}
