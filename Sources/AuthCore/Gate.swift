#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// A one-shot signal: tasks wait until it opens; once open it stays open.
/// Used to keep a provider's requests in arrival order where it matters: a
/// login or logout waits for every earlier request of that provider, and a
/// request waits for earlier logins and logouts.
final class Gate: @unchecked Sendable {
    private let lock = Lock()
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        lock.lock()
        isOpen = true
        let ready = waiters
        waiters = []
        lock.unlock()
        ready.forEach { $0.resume() }
    }

    var opened: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isOpen
    }

    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            lock.lock()
            if isOpen {
                lock.unlock()
                c.resume()
            } else {
                waiters.append(c)
                lock.unlock()
            }
        }
    }
}
