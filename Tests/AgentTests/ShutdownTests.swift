import DevIssuer
import Foundation
import JSON
import XCTest

/// What happens to a refresh that is talking to the server when the agent is told to exit.
final class ShutdownTests: XCTestCase {
    /// Issue 10.4: the server rotates the refresh token slowly, after the 5 s grace for
    /// in-flight requests; the agent still waits for that answer and persists it, so the
    /// next agent refreshes with the rotated token instead of replaying the spent one
    /// (which this issuer punishes by revoking the whole token family).
    func testEndOfInputWaitsForARefreshInFlightAndPersistsTheRotatedToken() throws {
        let harness = try AgentHarness()
        let first = try harness.spawn()
        XCTAssertNotNil(try first.call("login", AgentHarness.corp, id: "login")["result"])
        harness.issuer.setLatency(milliseconds: 6500)
        try first.send(#"{"jsonrpc":"2.0","id":"r","method":"refresh","params":{"provider":"corp"}}"#)
        let sent = Date()
        Thread.sleep(forTimeInterval: 0.3)
        first.closeInput()
        let status = first.waitForExit(timeout: 20)
        XCTAssertEqual(status, 0, "the agent exits once the refresh is stored; stderr:\n\(first.stderr)")
        XCTAssertEqual(harness.issuer.count("token.refresh_token"), 1)
        harness.issuer.setLatency(milliseconds: 0)
        // The issuer rotates the token when it handles the request, after its latency.
        Thread.sleep(until: sent.addingTimeInterval(7))

        let second = try harness.spawn()
        let answer = try second.call("refresh", ["provider": "corp"], id: "again")
        XCTAssertEqual(answer["result"]?["refreshed"], true, "the stored refresh token is the rotated one: \(answer)")
        second.closeInput()
        XCTAssertEqual(second.waitForExit(timeout: 10), 0)
    }
}
