import Dispatch
import Locking
import XCTest

final class ThreadWaitTests: XCTestCase {
    func testPausesDoubleFromOneMillisecondToTwentyFiveAndNeverPassTheDeadline() {
        var backoff = PollingBackoff()
        let pauses = (0..<7).map { _ in backoff.pause(leaving: 1) }
        XCTAssertEqual(pauses, [0.001, 0.002, 0.004, 0.008, 0.016, 0.025, 0.025])
        XCTAssertEqual(backoff.pause(leaving: 0.003), 0.003)
        XCTAssertEqual(backoff.pause(leaving: -1), 0)
    }

    func testChecksOnceWithoutATimeoutAndGivesUpAtIt() {
        var tries = 0
        XCTAssertNil(ThreadWait().wait(timeout: 0) { () -> Int? in tries += 1; return nil })
        XCTAssertEqual(tries, 1)
        XCTAssertEqual(ThreadWait().wait(timeout: 0) { 7 }, 7)
        let start = DispatchTime.now().uptimeNanoseconds
        XCTAssertNil(ThreadWait().wait(timeout: 0.1) { () -> Int? in nil })
        XCTAssertGreaterThanOrEqual(DispatchTime.now().uptimeNanoseconds - start, 100_000_000)
    }

    func testAnotherThreadEndsTheWait() {
        let done = Locked(false)
        let wait = ThreadWait()
        XCTAssertTrue(DetachedThread.start {
            done.withLock { $0 = true }
            wait.wake()
        })
        let start = DispatchTime.now().uptimeNanoseconds
        XCTAssertEqual(wait.wait(timeout: 30) { done.current ? true : nil }, true)
        XCTAssertLessThan(DispatchTime.now().uptimeNanoseconds - start, 5_000_000_000)
    }
}
