import XCTest
import AuthCore
import TestSupport

final class MemorySessionStoreTests: XCTestCase {
    func testSaveLoadRemove() throws {
        let store = MemorySessionStore()
        let s = Session(accessToken: "a", obtainedAt: Date(timeIntervalSince1970: 5), generation: 2)
        XCTAssertNil(try store.load("api"))
        try store.save(s, for: "api")
        XCTAssertEqual(try store.load("api"), s)
        XCTAssertNil(try store.load("corp"))
        try store.remove("api")
        XCTAssertNil(try store.load("api"))
    }

    func testLockSerialisesAndTimesOut() throws {
        let store = MemorySessionStore()
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? store.withLock("api", timeout: 1) {
                held.signal()
                release.wait()
            }
            finished.signal()
        }.start()
        held.wait()
        XCTAssertThrowsError(try store.withLock("api", timeout: 0.1) {}) { error in
            XCTAssertEqual(error as? SessionStoreError, .lockTimeout(provider: "api"))
        }
        XCTAssertEqual(try store.withLock("corp", timeout: 0) { 1 }, 1)
        let waiter = TestBox<Int?>(nil)
        let got = DispatchSemaphore(value: 0)
        Thread {
            waiter.set(try? store.withLock("api", timeout: 5) { 7 })
            got.signal()
        }.start()
        usleep(50_000)
        XCTAssertNil(waiter.get(), "still waiting while the lock is held")
        release.signal()
        XCTAssertEqual(got.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(waiter.get(), 7)
        XCTAssertEqual(finished.wait(timeout: .now() + 5), .success)
    }

    func testManyThreadsCountCorrectly() throws {
        let store = MemorySessionStore()
        let counter = TestBox(0)
        let inside = TestBox(0)
        let overlaps = TestBox(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<50 {
                try? store.withLock("api", timeout: 5) {
                    if inside.update({ $0 += 1; return $0 }) > 1 { overlaps.update { $0 += 1 } }
                    let v = counter.get()
                    counter.set(v + 1)
                    inside.update { $0 -= 1 }
                }
            }
        }
        XCTAssertEqual(counter.get(), 400)
        XCTAssertEqual(overlaps.get(), 0)
    }
}
