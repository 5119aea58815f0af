import Locking

/// Passes on the first message only: a server that always sends the same odd
/// answer is worth one line in the log, not one per refresh.
final class WarnOnce: Sendable {
    private let fired = Locked(false)
    private let sink: @Sendable (String) -> Void

    init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    func callAsFunction(_ message: @autoclosure () -> String) {
        let first = fired.withLock { fired -> Bool in
            defer { fired = true }
            return !fired
        }
        if first { sink(message()) }
    }
}
