import DevIssuer
import Foundation
import XCTest

/// The issuer reads its time from the `now` it is given, so a test sharing a virtual clock with
/// an agent lets token lifetimes and device codes pass without waiting.
final class IssuerClockTests: IssuerTestCase {
    private let time = TestTime()

    override func setUpWithError() throws {
        let time = self.time
        issuer = DevIssuer(options: options, now: { time.now })
        port = try issuer.start()
    }

    func testTokensLiveByTheGivenClock() throws {
        issuer.setAccessTokenLifetime(60)
        let tokens = try passwordGrant()
        let claims = try XCTUnwrap(jwtClaims(tokens.access))
        XCTAssertEqual(claims["iat"]?.intValue, 1_800_000_000)
        XCTAssertEqual(claims["exp"]?.intValue, 1_800_000_060)
        XCTAssertEqual(try get("/api/me", bearer: tokens.access).status, 200)
        time.advance(59)
        XCTAssertEqual(try get("/api/me", bearer: tokens.access).status, 200)
        time.advance(1)
        XCTAssertEqual(try get("/api/me", bearer: tokens.access).status, 401)
    }

    func testDeviceCodesExpireByTheGivenClock() throws {
        let started = try postForm("/device_authorization", [("client_id", "cli")])
        XCTAssertEqual(started.status, 200, started.text)
        let userCode = try XCTUnwrap(started.json?["user_code"]?.stringValue)
        let lifetime = try XCTUnwrap(started.json?["expires_in"]?.intValue)
        time.advance(Double(lifetime))
        XCTAssertFalse(issuer.approveDevice(userCode: userCode, username: "alice"), "a device code past its lifetime is not pending")
    }
}

/// A time that moves only when told.
private final class TestTime: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)

    var now: Date { lock.withLock { current } }

    func advance(_ seconds: Double) { lock.withLock { current += seconds } }
}
