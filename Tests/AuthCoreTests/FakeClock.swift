@testable import AuthCore
import Foundation

/// A clock that moves only when told: `advance` by hand, or `sleep`, which
/// returns at once having moved the clock by the time slept (and records it).
final class FakeClock: Clock, @unchecked Sendable {
    private let current = TestBox(Date(timeIntervalSince1970: 1_800_000_000))
    let sleeps = TestBox<[Double]>([])

    func now() -> Date { current.get() }

    func advance(_ seconds: TimeInterval) { current.update { $0 = $0.addingTimeInterval(seconds) } }

    func sleep(seconds: Double) async throws {
        try Task.checkCancellation()
        sleeps.update { $0.append(seconds) }
        advance(seconds)
        await Task.yield()
    }
}
