import AuthCore
import Dispatch
import Foundation

/// Real time plus the jumps a test asks for: `now` is the system's time moved forward by
/// every `advance` so far, and a `sleep` ends when this clock reaches its end — by real time
/// passing or at once when an `advance` jumps past it.
///
/// For an agent and a dev issuer that share it in one process (the in-process transcripts'
/// `!advance`). Unlike `FakeClock`, whose `sleep` returns at once having moved the clock,
/// time here also passes by itself: a device login polling every second must poll at that
/// pace while the test approves it, as it does against the real clock, not spin the clock
/// past the device code's expiry before the test has read the prompt.
public final class VirtualClock: Clock, @unchecked Sendable {
    private struct State {
        var offset: TimeInterval = 0
        var sleepers: [Int: (end: Date, continuation: CheckedContinuation<Void, Never>)] = [:]
        var tickers: [Int: (interval: Double, tick: @Sendable () -> Void)] = [:]
        var nextID = 0

        mutating func newID() -> Int {
            nextID += 1
            return nextID
        }
    }

    private let state = TestBox(State())

    public init() {}

    public func now() -> Date { Date().addingTimeInterval(state.get().offset) }

    /// Moves the clock `seconds` forward: every sleep whose end this passes ends now, and every
    /// periodic tick whose interval it spans ticks once (the time it skipped had at least one).
    public func advance(_ seconds: TimeInterval) {
        let (sleepers, tickers) = state.update { s in
            s.offset += max(0, seconds)
            defer { s.sleepers = [:] }
            return (s.sleepers.values.map(\.continuation), s.tickers.values.filter { $0.interval <= seconds }.map(\.tick))
        }
        // Woken sleepers look at the clock again and go back to sleep if their end is still ahead.
        sleepers.forEach { $0.resume() }
        tickers.forEach { $0() }
    }

    /// How many sleeps are under way.
    public var sleepers: Int { state.get().sleepers.count }

    /// Moves the clock to the end of the earliest sleep, if anything sleeps on it: for a test
    /// waiting on an agent that waits on this clock, the time in between is idle and skipped (as
    /// Tokio's paused clock advances to the next timer when the runtime has nothing else to do).
    /// False when nothing sleeps.
    @discardableResult
    public func skipToNextWakeUp() -> Bool {
        guard let end = state.get().sleepers.values.map(\.end).min() else { return false }
        advance(max(0, end.timeIntervalSince(now())))
        return true
    }

    public func sleep(for seconds: Double) async throws {
        let end = now().addingTimeInterval(max(0, seconds))
        while true {
            try Task.checkCancellation()
            let left = end.timeIntervalSince(now())
            guard left > 0 else { return }
            await nap(until: end, atMost: left)
        }
    }

    /// Ticks on the system clock's timer, and once more at each `advance` that spans `interval`.
    public func every(_ interval: Double, _ tick: @escaping @Sendable () -> Void) -> Ticker {
        let id = state.update { s -> Int in
            let id = s.newID()
            s.tickers[id] = (interval, tick)
            return id
        }
        let timer = SystemClock().every(interval, tick)
        return Ticker { [state] in
            timer.stop()
            state.update { _ = $0.tickers.removeValue(forKey: id) }
        }
    }

    /// Returns after `seconds` of real time, at the next `advance`, or when the task is
    /// cancelled, whichever comes first. `end` is when the sleep ends on this clock.
    private func nap(until end: Date, atMost seconds: Double) async {
        let id = state.update { $0.newID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                state.update { $0.sleepers[id] = (end, continuation) }
                if Task.isCancelled { wake(id) }
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { self.wake(id) }
            }
        } onCancel: {
            wake(id)
        }
    }

    /// Resumes a sleeper once: whoever takes it out of the table resumes it.
    private func wake(_ id: Int) {
        state.update { $0.sleepers.removeValue(forKey: id) }?.continuation.resume()
    }
}
