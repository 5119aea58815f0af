#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The agent's notion of time, injectable so refresh timing and polling are
/// testable in milliseconds with a clock that moves only when told.
public protocol Clock: Sendable {
    func now() -> Date
    /// Waits `seconds` of this clock's time; throws `CancellationError` when the task is cancelled.
    func sleep(seconds: Double) async throws
}

public struct SystemClock: Clock {
    public init() {}
    public func now() -> Date { Date() }
    public func sleep(seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1_000_000_000))
    }
}
