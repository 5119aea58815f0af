import AuthCore
import Foundation
import Locking

/// A clock that moves only when told: `advance` by hand, or `sleep`, which returns at once
/// having moved the clock by the time slept (and records it). Tickers (`every`) tick as the
/// clock passes their times, within `advance`.
public final class FakeClock: Clock, @unchecked Sendable {
    private struct Tick {
        let id: Int
        let interval: Double
        var due: Date
        let tick: @Sendable () -> Void
    }

    private let current = TestBox(Date(timeIntervalSince1970: 1_800_000_000))
    private let ticks = TestBox<[Tick]>([])
    public let sleeps = TestBox<[Double]>([])

    public init() {}

    public func now() -> Date { current.get() }

    public func advance(_ seconds: TimeInterval) {
        let now = current.update { now -> Date in
            now = now.addingTimeInterval(seconds)
            return now
        }
        // Each ticker ticks once per interval passed, outside the box's lock (a tick may read the clock).
        while let tick = ticks.update({ ticks -> (@Sendable () -> Void)? in
            guard let i = ticks.indices.filter({ ticks[$0].due <= now }).min(by: { ticks[$0].due < ticks[$1].due }) else { return nil }
            ticks[i].due = ticks[i].due.addingTimeInterval(ticks[i].interval)
            return ticks[i].tick
        }) {
            tick()
        }
    }

    public func sleep(for seconds: Double) async throws {
        try Task.checkCancellation()
        sleeps.update { $0.append(seconds) }
        advance(seconds)
        await Task.yield()
    }

    /// Ticks now, like the system clock's timer, then as `advance` passes each interval.
    public func every(_ interval: Double, _ tick: @escaping @Sendable () -> Void) -> Ticker {
        let id = ticks.update { ticks -> Int in
            let id = (ticks.map(\.id).max() ?? 0) + 1
            ticks.append(Tick(id: id, interval: max(interval, 0.001), due: now().addingTimeInterval(interval), tick: tick))
            return id
        }
        tick()
        return Ticker { [ticks] in ticks.update { $0.removeAll { $0.id == id } } }
    }

    /// The store lock's wait at the system's pace: each pause between tries takes its real time
    /// and moves this clock as much, so a lock held by a task that waits in real time (a scripted
    /// server's latency) is still waited for, a lock nobody frees times out as it would, and a
    /// test that moves the clock past the deadline ends the wait at once.
    public func poll<T>(until deadline: Deadline, _ attempt: () throws -> T?) async throws -> T? {
        var backoff = PollingBackoff()
        while true {
            if let value = try attempt() { return value }
            let left = remaining(until: deadline)
            guard left > 0 else { return nil }
            let pause = backoff.pause(leaving: left)
            try await Task.sleep(nanoseconds: UInt64(pause * 1e9))
            advance(pause)
        }
    }
}
