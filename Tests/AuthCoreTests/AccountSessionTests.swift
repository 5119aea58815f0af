@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import Wire
import XCTest

/// The auth service's session state machine — single flight, proactive and
/// background refresh, failures while a token is valid, shutdown — driven with
/// a fake clock and a scripted token endpoint: no process, no socket, no sleeping
/// for token lifetimes.
final class AccountSessionTests: XCTestCase {
    /// A token endpoint that answers from a script and counts what it was asked.
    final class FakeTokenEndpoint: HTTPTransport, @unchecked Sendable {
        /// `hang` waits for `unhang()`, then times out or (`thenTokens`) answers with new tokens.
        enum Answer { case tokens(lifetime: Int), status(Int, String), hang(thenTokens: Bool) }
        let next = TestBox<[Answer]>([])
        let grants = TestBox<[String]>([])
        let issued = TestBox(0)
        let release = TestBox<[CheckedContinuation<Void, Never>]>([])
        var defaultLifetime = 3600

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            let form = FormEncoding.uniqueParameters(request.body ?? []) ?? [:]
            grants.update { $0.append(form["grant_type"] ?? "?") }
            var answer = next.update { $0.isEmpty ? .tokens(lifetime: defaultLifetime) : $0.removeFirst() }
            if case .hang(let thenTokens) = answer {
                await withCheckedContinuation { c in release.update { $0.append(c) } }
                guard thenTokens else { throw HTTPTransportError.timedOut }
                answer = .tokens(lifetime: defaultLifetime)
            }
            switch answer {
            case .tokens(let lifetime):
                let n = issued.update { $0 += 1; return $0 }
                let body: JSONValue = ["access_token": .string("access-\(n)"), "token_type": "Bearer",
                                       "expires_in": .int(Int64(lifetime)), "refresh_token": .string("refresh-\(n)")]
                return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: JSONSerializer.bytes(body))
            case .status(let code, let error):
                let body: [UInt8] = error.isEmpty ? [] : JSONSerializer.bytes(["error": .string(error)])
                return HTTPResponse(status: code, headers: ["Content-Type": "application/json"], body: body)
            case .hang: fatalError("handled above")
            }
        }

        func unhang() { for c in release.update({ r -> [CheckedContinuation<Void, Never>] in defer { r = [] }; return r }) { c.resume() } }
        var refreshes: Int { grants.get().filter { $0 == "refresh_token" }.count }
    }

    private let clock = FakeClock()
    private let endpoint = FakeTokenEndpoint()
    private let events = TestBox<[AuthEvent]>([])
    private let store = MemorySessionStore()
    private let logs = TestBox<[String]>([])

    private func makeService(window: Int = 60, minValidity: Int = 10) -> AuthService {
        var config = AgentConfig(refreshWindowSeconds: window, store: .memory, providers: [
            ProviderConfig(id: "corp", flow: .password, origins: [Origin(url: "https://api.example.com")!],
                           tokenEndpoint: "https://sso.example.com/token", clientId: "cli"),
        ])
        config.minValiditySeconds = minValidity
        let events = self.events, logs = self.logs
        return AuthService(config: config, store: store, transport: endpoint, clock: clock,
                           logger: Logger(level: .warn, sink: { line in logs.update { $0.append(line) } }), httpTimeout: 1, lockTimeout: 1,
                           events: { event in events.update { $0.append(event) } })
    }

    private func login(_ service: AuthService, lifetime: Int = 3600) async throws {
        endpoint.next.set([.tokens(lifetime: lifetime)])
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
    }

    private static func token(_ service: AuthService) async throws -> String {
        try await service.token(provider: "corp").accessToken
    }

    private static func signedAuthorization(_ service: AuthService) async throws -> String? {
        let url = "https://api.example.com/x"
        var decision = try service.signNow(url: url, provider: nil)
        if decision == nil { decision = try await service.sign(url: url, provider: nil) }
        guard case .signed(let signature) = decision else { return nil }
        return signature.authorization
    }

    /// Waits (bounded) for a background task of the service to have an effect.
    private func eventually(_ what: String, _ condition: () -> Bool) async throws {
        for _ in 0..<2000 where !condition() { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(condition(), "timed out waiting until \(what)")
    }

    private var refreshedEvents: Int { events.get().filter { $0.name == .tokenRefreshed }.count }
    private var loggedOutEvents: Int { events.get().filter { $0.name == .userLoggedOut }.count }

    // MARK: Ordering

    /// The `sign` shortcut learns the provider a request is ordered by from `signNow`'s one
    /// routing, and an earlier login or logout still unanswered (`runsNow` false) leaves the
    /// session untouched: no answer, no error, no background refresh.
    /// An account's store key is the provider and the first 16 bytes of SHA-256 of the account id, in
    /// lowercase hex: the sessions every earlier version wrote are found under it.
    func testAnAccountsStoreKeyIsStable() {
        XCTAssertEqual(StoreKeys.account("alice", of: "corp"), "corp+2bd806c97f0e00af1a1fc3328fa763a9")
        XCTAssertEqual(StoreKeys.account("0", of: "api.example"), "api.example+5feceb66ffc86f38d952786c6d696c79")
    }

    func testSignNowAsksWhetherTheProviderMayBeUsedBeforeDecidingAnything() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600 - 30)  // stale: signing would start a background refresh
        var asked: [String] = []
        XCTAssertNil(try service.signNow(url: "https://api.example.com/x", provider: nil, runsNow: { asked.append($0); return false }))
        XCTAssertNil(try service.signNow(url: "https://other.example.com/", provider: "corp", runsNow: { asked.append($0); return false }),
                     "an error is held back like an answer")
        XCTAssertNil(try service.signNow(url: "https://other.example.com/", provider: "nope", runsNow: { asked.append($0); return false }))
        XCTAssertEqual(try service.signNow(url: "https://other.example.com/", provider: nil, runsNow: { asked.append($0); return false }), .unsigned,
                       "an unsigned request waits for nobody")
        XCTAssertEqual(asked, ["corp", "corp", "nope"])
        try await Task.sleep(nanoseconds: 50_000_000)
        XCTAssertEqual(endpoint.refreshes, 0)
        XCTAssertThrowsError(try service.signNow(url: "https://other.example.com/", provider: "corp", runsNow: { _ in true }))
        XCTAssertNotNil(try service.signNow(url: "https://api.example.com/x", provider: nil, runsNow: { _ in true }))
        try await eventually("the background refresh ran") { endpoint.refreshes == 1 }
    }

    // MARK: Single flight

    func testManyCallersOfAnExpiredTokenShareOneRefresh() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600)
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await Self.token(service) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(endpoint.refreshes, 1)
        XCTAssertEqual(tokens, ["access-2"])
        XCTAssertEqual(refreshedEvents, 1)
    }

    // MARK: Fresh, stale, expired

    func testAFreshTokenIsNeverRefreshed() async throws {
        let service = makeService()
        try await login(service, lifetime: 60)  // window 60 bounded to 30
        for _ in 0..<10 {
            clock.advance(2)
            let got1 = try await Self.token(service)
            XCTAssertEqual(got1, "access-1")
        }
        XCTAssertEqual(endpoint.refreshes, 0)
    }

    func testAStaleTokenIsAnsweredAtOnceAndRefreshedInTheBackground() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600 - 30)  // in the window, far from the margin
        endpoint.next.set([.hang(thenTokens: false)])
        let got2 = try await Self.signedAuthorization(service)
        XCTAssertEqual(got2, "Bearer access-1", "answered while the refresh hangs")
        let got3 = try await Self.token(service)
        XCTAssertEqual(got3, "access-1")
        try await eventually("the refresh reached the server") { endpoint.refreshes == 1 }
        endpoint.unhang()
        try await eventually("the failure was recorded") { logs.get().contains { $0.contains("background refresh of corp failed") } }
        // The hung call failed (timed out): the token stays in use, nobody was logged out.
        let got4 = try await Self.signedAuthorization(service)
        XCTAssertEqual(got4, "Bearer access-1")
        XCTAssertEqual(loggedOutEvents, 0)
        // After the backoff the next caller starts a refresh that lands.
        clock.advance(1.01)
        _ = try await Self.signedAuthorization(service)
        try await eventually("the background refresh landed") { refreshedEvents == 1 }
        let got5 = try await Self.signedAuthorization(service)
        XCTAssertEqual(got5, "Bearer access-2")
        XCTAssertEqual(endpoint.refreshes, 2)
    }

    func testBackgroundFailuresBackOffInsteadOfCallingTheServerOnEveryRequest() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600 - 40)
        endpoint.next.set(Array(repeating: .status(503, ""), count: 10))
        for _ in 0..<20 { _ = try await Self.signedAuthorization(service) }
        try await eventually("one refresh failed") { logs.get().contains { $0.contains("background refresh of corp failed") } }
        for _ in 0..<20 { _ = try await Self.signedAuthorization(service) }
        XCTAssertEqual(endpoint.refreshes, 1, "within the backoff nothing is sent")
        clock.advance(1.01)
        _ = try await Self.signedAuthorization(service)
        try await eventually("a second attempt after the backoff") { endpoint.refreshes == 2 }
    }

    /// Issue 10.3: a passing failure of a needed refresh while the token is still valid answers with that token.
    func testAPassingFailureWithAValidTokenAnswersWithThatToken() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600 - 5)  // inside the 10 s margin: callers wait for the refresh
        endpoint.next.set([.status(503, "")])
        let got6 = try await Self.token(service)
        XCTAssertEqual(got6, "access-1")
        XCTAssertEqual(endpoint.refreshes, 1)
        XCTAssertEqual(loggedOutEvents, 0)
    }

    func testAPassingFailureWithAnExpiredTokenIsRetryableAndKeepsTheSession() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3601)
        endpoint.next.set([.status(503, "")])
        do {
            _ = try await Self.token(service)
            XCTFail("an expired token cannot be used")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .authServerUnavailable)
        }
        XCTAssertEqual(loggedOutEvents, 0)
        let got7 = try await Self.token(service)
        XCTAssertEqual(got7, "access-2", "the next request refreshes")
    }

    func testARejectedRefreshEndsTheSession() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3601)
        endpoint.next.set([.status(400, "invalid_grant")])
        do {
            _ = try await Self.token(service)
            XCTFail("the session is over")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .sessionExpired)
        }
        XCTAssertEqual(events.get().last, .loggedOut(provider: "corp", account: "alice", reason: .expired))
        XCTAssertNil(try store.load(StoreKeys.account("alice", of: "corp")))
    }

    func testTheExcessiveRefreshLimitDoesNotFailAValidToken() async throws {
        let service = makeService()
        try await login(service, lifetime: 3600)
        endpoint.defaultLifetime = 20  // effective window 10 s, margin 5 s
        for _ in 0..<5 {
            _ = try await service.refresh(provider: "corp", failedAuthorization: nil)
        }
        XCTAssertEqual(endpoint.refreshes, 5)
        clock.advance(16)  // the sixth refresh would be needed, but the limit holds
        let got8 = try await Self.token(service)
        XCTAssertEqual(got8, "access-6")
        XCTAssertEqual(endpoint.refreshes, 5)
    }

    /// Issue 19.7: the limit counts a token's refreshes in the store, so it holds across agent
    /// processes (two services on one store here; a `git-credential` per request in life).
    /// Each token shape has its own count, as it has its own expiry.
    func testTheRefreshLimitCountsTheRefreshesOfEveryAgent() async throws {
        let a = makeService(), b = makeService()
        try await login(a)
        for service in [a, b, a, b, a] {
            service.checkStore()  // what the watch does: each refresh starts from the latest session
            _ = try await service.refresh(provider: "corp", failedAuthorization: nil)
        }
        XCTAssertEqual(endpoint.refreshes, 5)
        for service in [b, a] {
            service.checkStore()
            do {
                _ = try await service.refresh(provider: "corp", failedAuthorization: nil)
                XCTFail("a sixth refresh within 30 s")
            } catch {
                XCTAssertEqual(error.code, .excessiveRefresh)
            }
        }
        XCTAssertEqual(endpoint.refreshes, 5)
        b.checkStore()
        _ = try await b.token(provider: "corp", shape: TokenShape(scopes: ["read"]))
        XCTAssertEqual(endpoint.refreshes, 6, "another shape is another token")
        clock.advance(30)
        a.checkStore()
        _ = try await a.refresh(provider: "corp", failedAuthorization: nil)
        XCTAssertEqual(endpoint.refreshes, 7, "the window has passed")
    }

    /// Issue 19.7: a caller asking for ever new token shapes, each a first grant, is stopped too.
    func testTheRefreshLimitStopsEverNewShapesOfOneAccount() async throws {
        let service = makeService()
        try await login(service)
        for i in 0..<20 { _ = try await service.token(provider: "corp", shape: TokenShape(audience: "api://\(i)")) }
        do {
            _ = try await service.token(provider: "corp", shape: TokenShape(audience: "api://20"))
            XCTFail("a 21st refresh of the account within 30 s")
        } catch {
            XCTAssertEqual(error.code, .excessiveRefresh)
            XCTAssertTrue(error.message.contains("(alice) was refreshed 20 times within 30 s, counting all its token shapes"), error.message)
        }
        XCTAssertEqual(endpoint.refreshes, 20)
    }

    // MARK: Changes during a refresh, shutdown

    func testALogoutDuringARefreshIsNotUndoneByIt() async throws {
        let service = makeService()
        try await login(service)
        clock.advance(3600 - 30)
        endpoint.next.set([.hang(thenTokens: false)])
        _ = try await Self.signedAuthorization(service)
        try await eventually("the refresh is under way") { endpoint.refreshes == 1 }
        let out = Task.detached { [service] in try await service.logout(provider: "corp") }
        endpoint.unhang()
        _ = try await out.value
        XCTAssertNil(try store.load(StoreKeys.account("alice", of: "corp")))
        do {
            _ = try await Self.token(service)
            XCTFail("logged out")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .notLoggedIn)
        }
    }

    /// Issue 10.4: shutdown waits for a refresh already sent and persists it; none starts afterwards.
    func testShutdownPersistsTheRefreshInFlightAndStartsNoOther() async throws {
        let service = makeService()
        let waited = try await shutDownWhileRefreshing(service, thenTokens: false)
        XCTAssertTrue(waited)
        XCTAssertEqual(try store.load(StoreKeys.account("alice", of: "corp"))?.accessToken, "access-1")
        // The hung call timed out here, so the store keeps the old tokens; nothing new may start now.
        clock.advance(31)
        do {
            _ = try await Self.token(service)
            XCTFail("no refresh may start during shutdown")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .authServerUnavailable)
        }
        XCTAssertEqual(endpoint.refreshes, 1)
    }

    func testShutdownWaitsForARefreshThatSucceedsAndItIsStored() async throws {
        let service = makeService()
        let waited = try await shutDownWhileRefreshing(service, thenTokens: true)
        XCTAssertTrue(waited)
        XCTAssertEqual(try store.load(StoreKeys.account("alice", of: "corp"))?.accessToken, "access-2", "persisted before the process may exit")
    }

    /// A refresh is sent and hangs at the server; the process starts shutting down, and the server
    /// answers (with tokens, or not) while it does. What `finishRefreshes` returned.
    private func shutDownWhileRefreshing(_ service: AuthService, thenTokens: Bool) async throws -> Bool {
        try await login(service)
        clock.advance(3600 - 30)
        endpoint.next.set([.hang(thenTokens: thenTokens)])
        _ = try await Self.signedAuthorization(service)
        try await eventually("the refresh is under way") { endpoint.refreshes == 1 }
        let finished = Task.detached { service.finishRefreshes() }
        try await Task.sleep(nanoseconds: 50_000_000)
        endpoint.unhang()
        return await finished.value
    }
}
