import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// The core's one notion of time and its one way to wait, injectable so refresh timing,
/// polling, the store lock's wait, the store watch and login deadlines are testable in
/// milliseconds with a clock that moves only when told (the tests' `FakeClock`).
///
/// Waits in the core are `sleep`s on this clock — alone (device-code polling), until a
/// `Deadline` (the browser login), or between the tries of `poll` (the store lock) — and the
/// one periodic job, the store watch, ticks on `every`. Real time remains only where the
/// operating system's I/O is bounded (a transfer's own timeout, sockets), in wall-clock stamps
/// compared with the file system's, and in `ThreadWait`; `WaitsOnTheClockTests` lists each place.
public protocol Clock: Sendable {
    func now() -> Date
    /// Waits `seconds` of this clock's time; throws `CancellationError` when the task is cancelled.
    func sleep(for seconds: Double) async throws
    /// Calls `tick` now and every `interval` seconds of this clock's time until the ticker is stopped.
    /// A tick may block (it reads the store), so it never runs on Swift concurrency's threads.
    func every(_ interval: Double, _ tick: @escaping @Sendable () -> Void) -> Ticker
    /// One pause between the tries of `poll`; `sleep(for:)` unless a clock says otherwise (the
    /// tests' clock pauses in real time there, so a lock held across a real wait is still waited for).
    func pollPause(_ seconds: Double) async throws
}

/// A point in a `Clock`'s time by which something must have happened.
public struct Deadline: Sendable, Hashable, Comparable {
    public let date: Date

    public init(_ date: Date) { self.date = date }

    public static func < (a: Deadline, b: Deadline) -> Bool { a.date < b.date }
}

/// A periodic tick started by `Clock.every`; `stop` ends it (also from within a tick).
public struct Ticker: Sendable {
    private let cancel: @Sendable () -> Void

    public init(stop: @escaping @Sendable () -> Void) { cancel = stop }

    public func stop() { cancel() }
}

extension Clock {
    /// `seconds` from now.
    public func deadline(after seconds: Double) -> Deadline { Deadline(now().addingTimeInterval(max(0, seconds))) }

    /// Seconds left until `deadline`; zero or less once it passed.
    public func remaining(until deadline: Deadline) -> Double { deadline.date.timeIntervalSince(now()) }

    /// Waits until `deadline` (at once when it passed); throws `CancellationError` when cancelled.
    public func sleep(until deadline: Deadline) async throws {
        try await sleep(for: max(0, remaining(until: deadline)))
    }

    /// The one polling wait: tries `attempt` until it gives a value, pausing between tries as
    /// `PollingBackoff` says (1 ms doubling to 25 ms, never past the deadline); nil when the
    /// deadline passed first. `attempt` runs at least once. For what nobody can announce — a
    /// lock that another process may hold.
    public func poll<T>(until deadline: Deadline, _ attempt: () throws -> T?) async throws -> T? {
        var backoff = PollingBackoff()
        while true {
            if let value = try attempt() { return value }
            let left = remaining(until: deadline)
            guard left > 0 else { return nil }
            try await pollPause(backoff.pause(leaving: left))
        }
    }

    public func pollPause(_ seconds: Double) async throws { try await sleep(for: seconds) }
}

public struct SystemClock: Clock {
    public init() {}

    public func now() -> Date { Date() }

    public func sleep(for seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }

    /// A Dispatch timer on the global queue: its ticks (a `stat` per record, a store read when
    /// one changed, perhaps the keyring's) may block, which Swift concurrency's few threads must not.
    public func every(_ interval: Double, _ tick: @escaping @Sendable () -> Void) -> Ticker {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue.global())
        timer.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(20))
        timer.setEventHandler(handler: tick)
        timer.resume()
        let armed = Locked<DispatchSourceTimer?>(timer)
        return Ticker { armed.withLock { $0?.cancel() } }
    }
}
