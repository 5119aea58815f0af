import Dispatch
import XCTest
import Locking

final class DetachedThreadTests: XCTestCase {
    func testRunsTheBodyOnAnotherThread() {
        let done = DispatchSemaphore(value: 0)
        let caller = pthread_self()
        nonisolated(unsafe) var ranElsewhere = false
        XCTAssertTrue(DetachedThread.start {
            ranElsewhere = pthread_equal(pthread_self(), caller) == 0
            done.signal()
        })
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success)
        XCTAssertTrue(ranElsewhere)
    }

    /// A thread that blocks does not hold up others: each gets its own.
    func testBlockedThreadsDoNotHoldUpOthers() {
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        for _ in 0..<8 {
            XCTAssertTrue(DetachedThread.start {
                started.signal()
                release.wait()
            })
        }
        for _ in 0..<8 { XCTAssertEqual(started.wait(timeout: .now() + 5), .success) }
        for _ in 0..<8 { release.signal() }
    }
}
