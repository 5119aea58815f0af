import AuthCore
import Foundation
import TestSupport
import XCTest

/// The in-process transcripts' clock: real time plus jumps, its sleeps ended by either.
final class VirtualClockTests: XCTestCase {
    private let clock = VirtualClock()

    func testTimePassesByItselfAndJumpsWhenAdvanced() async throws {
        let start = clock.now()
        try await clock.sleep(for: 0.02)
        XCTAssertGreaterThanOrEqual(clock.now().timeIntervalSince(start), 0.02, "a short sleep ends by real time passing")
        clock.advance(3600)
        XCTAssertGreaterThanOrEqual(clock.now().timeIntervalSince(start), 3600)
        XCTAssertLessThan(clock.now().timeIntervalSince(Date()), 3601)
    }

    func testAnAdvancePastASleepsEndWakesItAndOneShortOfItDoesNot() async throws {
        let started = Date()
        let sleeper = Task { [clock] in try await clock.sleep(for: 60) }
        try await waitUntilSomethingSleeps()
        clock.advance(30)
        try await waitUntilSomethingSleeps()
        XCTAssertTrue(clock.skipToNextWakeUp(), "30 s of 60 passed: it sleeps again until the rest has")
        try await sleeper.value
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "60 s of the clock, not of the wall")
        XCTAssertFalse(clock.skipToNextWakeUp(), "nothing sleeps any more")
    }

    func testACancelledSleepEndsAtOnce() async throws {
        let sleeper = Task { [clock] in try await clock.sleep(for: 60) }
        try await waitUntilSomethingSleeps()
        sleeper.cancel()
        do {
            try await sleeper.value
            XCTFail("a cancelled sleep throws")
        } catch is CancellationError {}
    }

    func testAnAdvanceTicksWhatTicksEveryInterval() throws {
        let ticks = TestBox(0)
        let ticker = clock.every(60) { ticks.update { $0 += 1 } }
        defer { ticker.stop() }
        let deadline = Date().addingTimeInterval(5)
        while ticks.get() == 0 && Date() < deadline { usleep(1_000) }  // the first tick, at once
        XCTAssertEqual(ticks.get(), 1)
        clock.advance(61)
        XCTAssertEqual(ticks.get(), 2)
        ticker.stop()
        clock.advance(61)
        XCTAssertEqual(ticks.get(), 2, "a stopped ticker ticks no more")
    }

    private func waitUntilSomethingSleeps() async throws {
        let deadline = Date().addingTimeInterval(5)
        while clock.sleepers == 0 {
            guard Date() < deadline else { return XCTFail("nothing slept on the clock within 5 s") }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
