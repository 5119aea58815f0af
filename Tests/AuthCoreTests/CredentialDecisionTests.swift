@testable import AuthCore
import Foundation
import XCTest

/// The one freshness decision (`RefreshTiming.decision`) as a table, and the one
/// "nobody replaced this session" check (`Session.isSameIssue`): pure, no agent or clock.
final class CredentialDecisionTests: XCTestCase {
    private let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    private let timing = RefreshTiming(window: 60, minValidity: 10)

    /// A token obtained at t0 for an hour, looked at with `left` seconds of it left (nil: none of its shape).
    private func decision(left: TimeInterval?, refreshable: Bool) -> CredentialDecision {
        let token = left.map { _ in Session(accessToken: "a", expiresAt: t0.addingTimeInterval(3600), obtainedAt: t0) }
        return timing.decision(for: token, refreshable: refreshable, at: t0.addingTimeInterval(3600 - (left ?? 0)))
    }

    func testTheTable() {
        // (state, seconds left, refreshable → decision, not refreshable → decision)
        let table: [(String, TimeInterval?, CredentialDecision, CredentialDecision)] = [
            ("fresh", 3600, .use, .use),
            ("stale", 30, .useAndRefreshInBackground, .use),
            ("expired, still valid", 5, .wait, .use),
            ("expired", -1, .wait, .wait),
            ("missing", nil, .wait, .wait),
        ]
        for (state, left, refreshable, notRefreshable) in table {
            XCTAssertEqual(decision(left: left, refreshable: true), refreshable, "\(state), refreshable")
            XCTAssertEqual(decision(left: left, refreshable: false), notRefreshable, "\(state), not refreshable")
        }
    }

    func testATokenWithoutExpiryIsUsedUntilRejected() {
        let token = Session(accessToken: "a", obtainedAt: t0)
        XCTAssertEqual(timing.decision(for: token, refreshable: true, at: t0.addingTimeInterval(1e9)), .use)
    }

    /// `sign`'s fast path asks the flow whether a session can be refreshed only for a token that is not fresh.
    func testRefreshableIsOnlyAskedWhenItMatters() {
        var asked = 0
        func refreshable() -> Bool { asked += 1; return true }
        let token = Session(accessToken: "a", expiresAt: t0.addingTimeInterval(3600), obtainedAt: t0)
        XCTAssertEqual(timing.decision(for: token, refreshable: refreshable(), at: t0), .use)
        XCTAssertEqual(timing.decision(for: nil as Session?, refreshable: refreshable(), at: t0), .wait)
        XCTAssertEqual(asked, 0)
        XCTAssertEqual(timing.decision(for: token, refreshable: refreshable(), at: t0.addingTimeInterval(3570)), .useAndRefreshInBackground)
        XCTAssertEqual(asked, 1)
    }

    func testSameIssueIsTheSameGenerationAndTokens() {
        let session = Session(accessToken: "a", refreshToken: "r", obtainedAt: t0, generation: 3)
        XCTAssertTrue(session.isSameIssue(as: session))
        var refreshed = session
        refreshed.generation = 4
        XCTAssertFalse(session.isSameIssue(as: refreshed))
        // A login after a logout may number its session 1 again: the tokens tell them apart.
        var relogged = session
        relogged.accessToken = "b"
        XCTAssertFalse(session.isSameIssue(as: relogged))
        var rotated = session
        rotated.refreshToken = "r2"
        XCTAssertFalse(session.isSameIssue(as: rotated))
        // Nothing else is compared: every write that matters numbers the session anew.
        var other = session
        other.user = ["name": "Alice"]
        XCTAssertTrue(session.isSameIssue(as: other))
    }
}
