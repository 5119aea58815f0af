import Foundation

/// Collects warnings passed to a store's `warn` callback.
final class WarningLog: @unchecked Sendable {
    private let lock = NSLock()
    private var messages: [String] = []

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return messages
    }

    var sink: @Sendable (String) -> Void {
        { [self] message in
            lock.lock()
            messages.append(message)
            lock.unlock()
        }
    }
}
