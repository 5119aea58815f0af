@testable import AuthCore
import Foundation
import XCTest

/// Issue 19, item 2: shaped tokens no longer pile up in the account's record
/// until a reader sets it aside. A new one drops those expired and, past
/// `Session.shapedLimit`, the least recently obtained.
final class ShapedPruningTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_800_000_000)

    private func token(_ n: Int, at offset: Double, lifetime: Double = 3600) -> ShapedToken {
        ShapedToken(shape: TokenShape(audience: "https://api-\(n).example.com"), accessToken: "shaped-\(n)", tokenType: "Bearer",
                    expiresAt: start.addingTimeInterval(offset + lifetime), obtainedAt: start.addingTimeInterval(offset))
    }

    func testExpiredShapesArePrunedAndTheRestCappedLeastRecentlyObtainedFirst() {
        var session = Session(accessToken: "a", obtainedAt: start)
        session = session.replacing(token(0, at: 0, lifetime: 10))
        for n in 1...40 { session = session.replacing(token(n, at: Double(n))) }
        XCTAssertEqual(session.shaped.count, Session.shapedLimit)
        XCTAssertEqual(session.shaped.map(\.accessToken), (9...40).map { "shaped-\($0)" }, "the expired one, then the oldest")

        // Obtained again: moved to the end, so it is the last to go.
        session = session.replacing(token(9, at: 100))
        session = session.replacing(token(41, at: 101))
        XCTAssertEqual(session.shaped.first?.accessToken, "shaped-11")
        XCTAssertEqual(session.shaped.suffix(2).map(\.accessToken), ["shaped-9", "shaped-41"])

        // A refresh of the session's own token keeps only the shapes still valid.
        let later = AuthService.merge(Session(accessToken: "b", obtainedAt: start.addingTimeInterval(3650)), into: session, shape: .none)
        XCTAssertEqual(later.shaped.map(\.accessToken), ["shaped-9", "shaped-41"])
    }
}
