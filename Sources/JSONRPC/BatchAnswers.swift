import Locking

/// The answers of one batch, which JSON-RPC answers with one array: collected
/// as its members are answered — by their work or by a cancellation, in any
/// order — and handed out once, when the last one is in.
final class BatchAnswers: @unchecked Sendable {
    private let lock = Lock()
    private var answers: [RPCResponse] = []
    /// Members still to be answered, plus one held until every member is dispatched,
    /// so an early answer cannot complete the batch before the rest are counted.
    private var awaited = 1

    /// A member answered while the batch is dispatched.
    func ready(_ answer: RPCResponse) {
        lock.lock()
        answers.append(answer)
        lock.unlock()
    }

    /// A member whose answer comes later.
    func expect() {
        lock.lock()
        awaited += 1
        lock.unlock()
    }

    /// An expected member's answer; every answer once it was the last.
    func answer(_ answer: RPCResponse) -> [RPCResponse]? {
        lock.lock()
        defer { lock.unlock() }
        answers.append(answer)
        return settleLocked()
    }

    /// Every member is dispatched; every answer if none is still expected.
    func close() -> [RPCResponse]? {
        lock.lock()
        defer { lock.unlock() }
        return settleLocked()
    }

    private func settleLocked() -> [RPCResponse]? {
        awaited -= 1
        return awaited == 0 ? answers : nil
    }
}
