import JSON

/// Requests that are still being worked on, by id, so `$/cancelRequest` can
/// find them.
///
/// The rule that every request gets exactly one answer is enforced here:
/// whoever removes an entry first — the finishing task or a cancellation —
/// owns the answer; the other side stays silent.
final class InFlightRequests: @unchecked Sendable {
    private struct Entry {
        var task: Task<Void, Never>?
    }

    private let lock = NSLockLike()
    private var byID: [JSONValue: [Int: Entry]] = [:]
    private var nextToken = 0

    func begin(_ id: JSONValue) -> Int {
        lock.lock()
        defer { lock.unlock() }
        nextToken += 1
        byID[id, default: [:]][nextToken] = Entry(task: nil)
        return nextToken
    }

    func attach(_ task: Task<Void, Never>, id: JSONValue, token: Int) {
        lock.lock()
        defer { lock.unlock() }
        if byID[id]?[token] != nil { byID[id]![token]!.task = task }
    }

    /// True when the caller still owns the answer for this request.
    func finish(_ id: JSONValue, token: Int) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard byID[id]?.removeValue(forKey: token) != nil else { return false }
        if byID[id]!.isEmpty { byID[id] = nil }
        return true
    }

    /// Removes every request with this id and returns how many there were;
    /// their tasks are cancelled.
    func cancel(_ id: JSONValue) -> Int {
        lock.lock()
        let entries = byID.removeValue(forKey: id) ?? [:]
        lock.unlock()
        for entry in entries.values { entry.task?.cancel() }
        return entries.count
    }
}
