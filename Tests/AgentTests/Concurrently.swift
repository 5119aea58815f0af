import Foundation
import Locking

/// Runs `body(0)` … `body(count - 1)` each on a thread of its own, all at once, and returns
/// their results in that order.
///
/// For independent scenarios that mostly wait on other processes (agents, servers, daemons):
/// `DispatchQueue.concurrentPerform` runs only as many bodies at once as there are CPUs (two
/// on CI), so waiting scenarios would still wait one after another.
///
/// Bodies should not call `XCTAssert…` (XCTest on Linux records failures without a lock):
/// they return what happened and the test judges it on its own thread.
///
/// - Throws: `ConcurrentTimeout` when a body is still running after `timeout` seconds.
func concurrently<T: Sendable>(_ count: Int, timeout: TimeInterval, _ body: @escaping @Sendable (Int) -> T) throws -> [T] {
    let results = Locked([Int: T]())
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread.detachNewThread {
            let result = body(index)
            results.withLock { $0[index] = result }
            group.leave()
        }
    }
    guard group.wait(timeout: .now() + timeout) == .success else { throw ConcurrentTimeout(seconds: timeout) }
    let all = results.current
    return (0..<count).map { all[$0]! }
}

/// `concurrently` gave up waiting for its bodies.
struct ConcurrentTimeout: Error, CustomStringConvertible {
    let seconds: TimeInterval
    var description: String { "concurrent scenarios still running after \(seconds) s" }
}
