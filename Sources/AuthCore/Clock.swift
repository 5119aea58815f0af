import Foundation

/// The agent's notion of now, injectable so refresh timing is testable without sleeping.
public protocol Clock: Sendable {
    func now() -> Date
}

public struct SystemClock: Clock {
    public init() {}
    public func now() -> Date { Date() }
}
