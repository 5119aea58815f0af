import Dispatch

/// The pauses between tries of a polling wait: 1 ms, doubling to 25 ms, never past what is left.
/// Shared by the one blocking wait below and the core's asynchronous `Clock.poll`, so a lock is
/// waited for the same way on a thread and in a task.
public struct PollingBackoff: Sendable {
    private var next = 0.001

    public init() {}

    /// The pause before the next try, given the seconds left until the deadline.
    public mutating func pause(leaving remaining: Double) -> Double {
        defer { next = min(next * 2, 0.025) }
        return max(0, min(next, remaining))
    }
}

/// The one way a thread blocks for longer than a lock's few instructions: until `check` gives
/// a value or a deadline passes, trying again after each `PollingBackoff` pause or at once when
/// woken.
///
/// Blocking a thread is kept for the few callers that cannot await: the lock file of an
/// interactive login and the store lock taken while a service or a keyring store is built
/// (synchronous code of the one-shot helpers and of start-up), `flock(2)` having no timed wait
/// of its own; and the two waits that must hold their thread — shutdown, where the process
/// exits as soon as the call returns, and the Secret Service probe, whose libsecret call blocks
/// its own thread. Everything else waits in a task, on the core's `Clock`.
public final class ThreadWait: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    public init() {}

    /// Ends the current pause of `wait` so that it checks again now (any thread or task may call it).
    public func wake() { semaphore.signal() }

    /// Blocks the calling thread until `check` gives a value (returned), or `timeout` seconds
    /// of monotonic time have passed (nil). `check` runs at least once.
    public func wait<T, E: Error>(timeout: Double, until check: () throws(E) -> T?) throws(E) -> T? {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        var backoff = PollingBackoff()
        while true {
            if let value = try check() { return value }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { return nil }
            let pause = backoff.pause(leaving: Double(deadline - now) / 1e9)
            _ = semaphore.wait(timeout: .now() + pause)
        }
    }
}
