import Foundation

/// A value behind an `NSLock`.
///
/// The server runs on plain threads (accept loop, one thread per connection),
/// so shared state is guarded by a lock rather than an actor: handlers are
/// synchronous and must not hop executors in the middle of a request.
final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access; keep it short and never block inside.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
