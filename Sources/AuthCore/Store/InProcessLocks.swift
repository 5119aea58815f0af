import Foundation

/// Named exclusive locks within one process, with a timeout on acquisition.
///
/// `MemorySessionStore` needs per-provider locks that can give up after a
/// deadline; `NSLock` cannot wait for one name while another is held, so this
/// keeps the set of held names under one condition variable.
final class InProcessLocks: @unchecked Sendable {
    private let condition = NSCondition()
    private var held: Set<String> = []

    /// Waits until `name` is free or `timeout` seconds pass; true when acquired.
    func acquire(_ name: String, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, timeout.isNaN ? 0 : min(timeout, 86_400)))
        condition.lock()
        defer { condition.unlock() }
        while held.contains(name) {
            if !condition.wait(until: deadline), held.contains(name) { return false }
        }
        held.insert(name)
        return true
    }

    func release(_ name: String) {
        condition.lock()
        held.remove(name)
        condition.broadcast()
        condition.unlock()
    }
}
