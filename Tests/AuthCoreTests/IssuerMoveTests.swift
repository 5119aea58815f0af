@testable import AuthCore
import Foundation
import Logging
import TestSupport
import XCTest

/// Issue 33 item 3 (MCP 2026-07-28): a learned API's sessions and registration belong to the
/// authorization server that issued them. When the resource's metadata names another server, the
/// agent logs in there afresh with a registration of its own, never sends the old server's tokens
/// to it, and says so (`providersChanged` with the id under `changed`, a line on stderr).
final class IssuerMoveTests: XCTestCase {
    func testAResourceThatMovedToAnotherServerIsLoggedInThereAfreshAndAnnounced() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        let heard = TestBox<[AuthEvent]>([])
        let said = TestBox<[String]>([])
        let service = AuthService(config: AgentConfig(), store: store, transport: server,
                                  logger: Logger(level: .info, sink: { line in said.update { $0.append(line) } }),
                                  events: { event in if event.name == .providersChanged { heard.update { $0.append(event) } } })
        let context = LoginContext(prompt: LearningTests.playBrowser(server))
        _ = try await service.login(resource: FakeAPI.resource, context: context)
        let heardThere = TestBox<[AuthEvent]>([])
        let there = AuthService(config: AgentConfig(), store: store, transport: server, logger: Logger(level: .error, sink: { _ in }),
                                events: { event in if event.name == .providersChanged { heardThere.update { $0.append(event) } } })
        there.checkStore()

        // The resource moves: its metadata names as2, which issues the only token it accepts now.
        server.namedIssuer = FakeAPI.otherIssuer
        server.iss = FakeAPI.otherIssuer
        server.accessToken = "at-2"
        server.resetLog()
        let answer = try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, login: .ifNeeded, context: context)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(server.count("/as2/register"), 1, "a registration of its own at the new server: \(server.paths())")
        XCTAssertEqual(server.count("/as2/token"), 1, "a fresh login there: \(server.paths())")
        XCTAssertEqual(server.count("/token"), 0, "the old server's refresh token is not spent: \(server.paths())")
        XCTAssertNil(server.lastForm("/as2/token")["refresh_token"], "the old server's refresh token never goes to the new one")
        XCTAssertEqual(server.lastForm("/as2/token")["client_id"]?.hasPrefix("as2-"), true)
        XCTAssertEqual(service.status().first?.learned?.issuer, FakeAPI.otherIssuer)
        XCTAssertEqual(heard.get().last, .providersChanged(added: [], removed: [], changed: ["api.example"]))
        XCTAssertTrue(said.get().contains { $0.contains("now names the authorization server \(FakeAPI.otherIssuer)") && $0.contains(FakeAPI.issuer) },
                      "\(said.get())")

        there.checkStore()
        XCTAssertEqual(heardThere.get().last, .providersChanged(added: [], removed: [], changed: ["api.example"]), "another process follows")
        XCTAssertEqual(there.status().first?.learned?.issuer, FakeAPI.otherIssuer)

        // The registrations stay keyed by issuer; forget deletes both.
        _ = try await service.forget(provider: "api.example")
        XCTAssertNil(try store.loadDocument(StoreKeys.learned), "forget deletes every registration no learned API uses")
    }

    /// A 401 whose resource still names the same server is the ordinary refresh: one metadata read, no new login.
    func testARejectedTokenOfAResourceThatDidNotMoveIsRefreshed() async throws {
        let server = FakeAPI()
        let service = AuthService(config: AgentConfig(), store: MemorySessionStore(), transport: server,
                                  logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        let context = LoginContext(prompt: LearningTests.playBrowser(server))
        _ = try await service.login(resource: FakeAPI.resource, context: context)
        server.accessToken = "at-2"
        server.resetLog()
        let answer = try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, login: .ifNeeded, context: context)
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(server.lastForm("/token")["grant_type"], "refresh_token")
        XCTAssertEqual(server.count("/register"), 0)
        XCTAssertEqual(server.count("/as2/token"), 0)
    }
}
