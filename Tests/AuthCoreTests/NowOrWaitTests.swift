@testable import AuthCore
import Foundation
import JSONRPC
import Logging
import TestSupport
import XCTest

/// "Try now, else wait" (`signNowOrWait`, `tokenNowOrWait`): the answer from memory when the
/// token needs nothing first; else an operation that sends nothing until it is waited for.
final class NowOrWaitTests: XCTestCase {
    func testAnswersNowOrSaysHowToWait() async throws {
        let endpoint = AccountSessionTests.FakeTokenEndpoint()
        let clock = FakeClock()
        let config = AgentConfig(refreshWindowSeconds: 60, store: .memory, providers: [
            ProviderConfig(id: "corp", flow: .password, origins: [Origin(url: "https://api.example.com")!],
                           tokenEndpoint: "https://sso.example.com/token", clientId: "cli"),
        ])
        let service = AuthService(config: config, store: MemorySessionStore(), transport: endpoint, clock: clock,
                                  logger: Logger(level: .warn, sink: { _ in }), httpTimeout: 1, lockTimeout: 1, events: { _ in })
        endpoint.next.set([.tokens(lifetime: 3600)])
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        let url = "https://api.example.com/x"

        guard case .now(.signed(let signature)) = try service.signNowOrWait(url: url, provider: nil) else { return XCTFail("not answered now") }
        XCTAssertEqual(signature.authorization, "Bearer access-1")
        guard case .now(let token) = try service.tokenNowOrWait(provider: "corp") else { return XCTFail("not answered now") }
        XCTAssertEqual(token.accessToken, "access-1")
        guard case .now(.unsigned) = try service.signNowOrWait(url: "https://elsewhere.example.com/", provider: nil) else { return XCTFail("signed") }

        clock.advance(3600)
        guard case .wait(let sign) = try service.signNowOrWait(url: url, provider: nil),
              case .wait(let waitForToken) = try service.tokenNowOrWait(provider: "corp") else { return XCTFail("an expired token answered now") }
        XCTAssertEqual(endpoint.refreshes, 0, "nothing is sent before someone waits")
        guard case .signed(let renewed) = try await sign() else { return XCTFail("not signed") }
        XCTAssertEqual(renewed.authorization, "Bearer access-2")
        let waited = try await waitForToken()
        XCTAssertEqual(waited.accessToken, "access-2", "the refreshed token, not a second refresh")
        XCTAssertEqual(endpoint.refreshes, 1)
    }
}
