import AuthCore
import Foundation
import XCTest

/// The refresh rule as a pure function of a session and a moment: no agent, no clock, no network.
final class RefreshTimingTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    private func session(lifetime: TimeInterval?) -> Session {
        Session(accessToken: "a", expiresAt: lifetime.map { t0.addingTimeInterval($0) }, obtainedAt: t0)
    }

    private func freshness(_ timing: RefreshTiming, lifetime: TimeInterval?, after seconds: TimeInterval) -> TokenFreshness {
        timing.freshness(of: session(lifetime: lifetime), at: t0.addingTimeInterval(seconds))
    }

    func testAnHourTokenIsFreshUntilTheWindowThenStaleThenExpiredInTheMargin() {
        let timing = RefreshTiming(window: 60, minValidity: 10)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 0), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 3539), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 3541), .stale)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 3589), .stale)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 3591), .expired)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 3600), .expired)
        XCTAssertEqual(freshness(timing, lifetime: 3600, after: 9999), .expired)
    }

    /// Issue 10.2: a 60 s token with a 60 s window was stale from birth and refreshed on every call.
    func testTheWindowIsBoundedByHalfTheLifetime() {
        let timing = RefreshTiming(window: 60, minValidity: 10)
        XCTAssertEqual(timing.effectiveWindow(session(lifetime: 60)), 30)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 0), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 29), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 31), .stale)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 49), .stale)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 51), .expired)
    }

    /// The margin is bounded by half the window, so short tokens still have a stale phase nobody waits in.
    func testShortTokensKeepAStalePhase() {
        let timing = RefreshTiming(window: 2, minValidity: 10)
        XCTAssertEqual(freshness(timing, lifetime: 4, after: 1.9), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 4, after: 2.5), .stale)
        XCTAssertEqual(freshness(timing, lifetime: 4, after: 3.1), .expired)
    }

    func testAZeroWindowRefreshesOnlyAtExpiry() {
        let timing = RefreshTiming(window: 0, minValidity: 10)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 59.9), .fresh)
        XCTAssertEqual(freshness(timing, lifetime: 60, after: 60), .expired)
    }

    func testNoExpiryIsAlwaysFreshAndValid() {
        let timing = RefreshTiming(window: 60, minValidity: 10)
        XCTAssertEqual(freshness(timing, lifetime: nil, after: 1e9), .fresh)
        XCTAssertTrue(RefreshTiming.isValid(session(lifetime: nil), at: t0.addingTimeInterval(1e9)))
    }

    func testATokenIssuedAlreadyExpiredIsExpired() {
        let timing = RefreshTiming(window: 60, minValidity: 10)
        XCTAssertEqual(freshness(timing, lifetime: 0, after: 0), .expired)
        XCTAssertEqual(freshness(timing, lifetime: -5, after: 0), .expired)
        XCTAssertFalse(RefreshTiming.isValid(session(lifetime: 0), at: t0))
        XCTAssertTrue(RefreshTiming.isValid(session(lifetime: 1), at: t0))
    }

    func testBackoffDoublesFromOneSecondCapsAtAMinuteWithJitterAndResets() {
        var backoff = RefreshBackoff()
        XCTAssertTrue(backoff.allows(at: t0))
        backoff.failed(at: t0, unit: 1)
        XCTAssertFalse(backoff.allows(at: t0.addingTimeInterval(0.99)))
        XCTAssertTrue(backoff.allows(at: t0.addingTimeInterval(1)))
        backoff.failed(at: t0, unit: 0)  // second failure: 2 s step, jitter at its lowest: half
        XCTAssertFalse(backoff.allows(at: t0.addingTimeInterval(0.99)))
        XCTAssertTrue(backoff.allows(at: t0.addingTimeInterval(1)))
        for _ in 0..<20 { backoff.failed(at: t0, unit: 1) }
        XCTAssertFalse(backoff.allows(at: t0.addingTimeInterval(59.9)))
        XCTAssertTrue(backoff.allows(at: t0.addingTimeInterval(60)))
        backoff.succeeded()
        XCTAssertTrue(backoff.allows(at: t0))
        XCTAssertEqual(backoff.failures, 0)
    }
}
