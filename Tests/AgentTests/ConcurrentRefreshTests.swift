import DevIssuer
import Foundation
import JSON
import XCTest

/// Single flight, end to end: many concurrent signs on an expiring token cause
/// exactly one call to the token endpoint.
final class ConcurrentRefreshTests: XCTestCase {
    func testHundredConcurrentSignsOnAnExpiringTokenRefreshOnce() throws {
        let harness = try AgentHarness()
        // The login's token is issued already expired, so every sign must wait for a refresh.
        harness.issuer.setAccessTokenLifetime(0)
        let agent = try harness.spawn()
        let login = try agent.call("login", ["provider": "corp", "credentials": ["username": "alice", "password": "wonderland"]])
        XCTAssertNotNil(login["result"], "\(login)")
        harness.issuer.setAccessTokenLifetime(3600)
        harness.issuer.setLatency(milliseconds: 200)  // keep the refresh in flight while all 100 arrive
        harness.issuer.resetCounts()

        var burst = Data()
        for i in 0..<100 {
            burst.append(contentsOf: JSONSerializer.bytes(["jsonrpc": "2.0", "id": .int(Int64(i)), "method": "sign",
                                                           "params": ["request": ["method": "GET", "url": .string(harness.issuer.baseURL + "/r/\(i)")]]]))
            burst.append(0x0A)
        }
        try agent.send(burst.dropLast())
        var authorizations: Set<String> = []
        var answered: Set<Int64> = []
        while answered.count < 100, let line = agent.nextLine(timeout: 15) {
            let m = try JSONParser.parse([UInt8](line))
            guard let id = m["id"]?.intValue else { continue }
            XCTAssertEqual(m["result"]?["signed"], true, "\(m)")
            if let a = m["result"]?["headers"]?["Authorization"]?.stringValue { authorizations.insert(a) }
            answered.insert(id)
        }
        XCTAssertEqual(answered.count, 100)
        XCTAssertEqual(authorizations.count, 1, "every sign got the one refreshed token")
        XCTAssertEqual(harness.issuer.count("token.refresh_token"), 1)
    }
}
