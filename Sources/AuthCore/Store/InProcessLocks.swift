import Locking

/// Named exclusive locks within one process, for `MemorySessionStore`: one
/// attempt each (waiting is `SessionStore.lock`'s, which sleeps between attempts).
final class InProcessLocks: Sendable {
    private let held = Locked<Set<String>>([])

    /// Takes `name` if it is free; true when acquired.
    func tryAcquire(_ name: String) -> Bool { held.withLock { $0.insert(name).inserted } }

    func release(_ name: String) { _ = held.withLock { $0.remove(name) } }
}
