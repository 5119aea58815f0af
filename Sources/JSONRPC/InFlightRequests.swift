import JSON
import Locking

/// Requests that are still being worked on, by id, so `$/cancelRequest` can
/// find them and a second request cannot take an id that is still in use.
///
/// The rule that every request gets exactly one answer is enforced here:
/// whoever removes an entry first — the finishing task or a cancellation —
/// delivers the answer; the other side stays silent.
final class InFlightRequests: @unchecked Sendable {
    /// Where a request's answer goes: the output for a lone request, its
    /// batch's answer for a batch member.
    typealias Deliver = @Sendable (RPCResponse) -> Void

    private struct Entry {
        /// Tells this request from a later one that reuses its id once it was answered.
        let token: Int
        let deliver: Deliver
        var task: Task<Void, Never>?
    }

    private let lock = Lock()
    private var byID: [JSONValue: Entry] = [:]
    private var nextToken = 0

    func contains(_ id: JSONValue) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return byID[id] != nil
    }

    /// Registers a request whose id `contains` just said is free. Only the
    /// reader thread begins requests, so nothing can take the id in between.
    func begin(_ id: JSONValue, deliver: @escaping Deliver) -> Int {
        lock.lock()
        defer { lock.unlock() }
        precondition(byID[id] == nil, "a second request in flight with one id")
        nextToken += 1
        byID[id] = Entry(token: nextToken, deliver: deliver)
        return nextToken
    }

    func attach(_ task: Task<Void, Never>, id: JSONValue, token: Int) {
        lock.lock()
        defer { lock.unlock() }
        if byID[id]?.token == token { byID[id]!.task = task }
    }

    /// Where to deliver the finished request's answer; nil when a
    /// cancellation already answered it.
    func finish(_ id: JSONValue, token: Int) -> Deliver? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = byID[id], entry.token == token else { return nil }
        byID[id] = nil
        return entry.deliver
    }

    /// Removes the request with this id and cancels its task; returns where
    /// to deliver its cancellation, or nil when no such request is in flight.
    func cancel(_ id: JSONValue) -> Deliver? {
        lock.lock()
        let entry = byID.removeValue(forKey: id)
        lock.unlock()
        entry?.task?.cancel()
        return entry?.deliver
    }

    /// Removes and cancels every request in flight; returns their ids and where each cancellation goes.
    func cancelAll() -> [(JSONValue, Deliver)] {
        lock.lock()
        let entries = byID
        byID.removeAll()
        lock.unlock()
        for entry in entries.values { entry.task?.cancel() }
        return entries.map { ($0.key, $0.value.deliver) }
    }
}
