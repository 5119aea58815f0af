@testable import AuthCore
import Foundation
import JSON
import Logging
import TestSupport
import XCTest

/// A session belongs to the issuer that issued it (issue 29 item 12): after the configuration
/// points the provider at another issuer, the stored session is not used — its tokens would go
/// to the new issuer's origins — yet it is kept until a login replaces it or a logout removes it.
final class IssuerChangeTests: XCTestCase {
    static let issuerA = "https://idp.example.com/a"
    static let issuerB = "https://idp.example.com/b"

    /// Two issuers on one host, each with its discovery document; one token endpoint issuing `at-N`.
    let server: FakeOAuthServer = {
        let server = FakeOAuthServer()
        for issuer in [issuerA, issuerB] {
            let path = URL(string: issuer)!.path
            server.answer("\(path)/.well-known/openid-configuration",
                          FakeOAuthServer.json(200, ["issuer": .string(issuer), "token_endpoint": .string("\(issuer)/token")]))
        }
        for n in 1...3 {
            server.answer("/a/token", FakeOAuthServer.json(200, ["access_token": .string("at-a\(n)"), "token_type": "Bearer", "expires_in": 3600]))
            server.answer("/b/token", FakeOAuthServer.json(200, ["access_token": .string("at-b\(n)"), "token_type": "Bearer", "expires_in": 3600]))
        }
        return server
    }()
    let store = MemorySessionStore()

    /// A new agent (as after a restart) on the shared store, its provider `corp` naming `issuer`.
    func service(issuer: String, server: FakeOAuthServer? = nil) -> AuthService {
        let corp = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: .password, origins: [Origin(url: "https://corp.example.com")!],
                                  clientId: "cli", issuer: issuer)
        return AuthService(config: AgentConfig(store: .memory, providers: [corp]), store: store, transport: server ?? self.server,
                           logger: Logger(level: .error, sink: { _ in }), events: { _ in })
    }

    func token(_ service: AuthService) async throws(AuthError) -> String {
        try await service.token(provider: "corp").accessToken
    }

    /// The record of `corp`'s only account, as stored.
    func storedRecord() throws -> Session? {
        let account = try XCTUnwrap(try store.loadIndex("corp")?.accounts.first)
        return try store.load(StoreKeys.account(account, of: "corp"))
    }

    func testASessionFromAnotherIssuerIsNotUsedAndKept() async throws {
        let a = service(issuer: Self.issuerA)
        _ = try await a.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        let first = try await token(a)
        XCTAssertEqual(first, "at-a1")

        let b = service(issuer: Self.issuerB)
        do {
            _ = try await token(b)
            XCTFail("the session of issuer A was used for issuer B")
        } catch {
            XCTAssertEqual(error.code, .notLoggedIn)
            XCTAssertTrue(error.message.contains("the session was issued by \(Self.issuerA); the configuration now names \(Self.issuerB): log in again"),
                          error.message)
        }
        XCTAssertEqual(try storedRecord()?.accessToken, "at-a1", "reading it did not delete or overwrite it")
        XCTAssertEqual(b.status().first?.accounts.count, 0)
        // `status` says it is there and why it is not used, as it does for a record the keyring keeps.
        let kept = try XCTUnwrap(b.status().first?.unreadable.first)
        XCTAssertTrue(kept.reason.contains("the session was issued by \(Self.issuerA)"), kept.reason)

        let back = service(issuer: Self.issuerA)
        let again = try await token(back)
        XCTAssertEqual(again, "at-a1", "the configuration naming A again uses A's session")
    }

    func testALoginReplacesTheOtherIssuersSessionAndAnExplicitLogoutRemovesIt() async throws {
        let a = service(issuer: Self.issuerA)
        for (all, account) in [(true, nil), (false, "alice")] as [(Bool, String?)] {
            _ = try await a.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
            let b = service(issuer: Self.issuerB)
            _ = try await b.logout(provider: "corp")
            XCTAssertNotNil(try storedRecord(), "a logout of the account a request would use: there is none")
            let revoked = try await b.logout(provider: "corp", account: AccountChoice(account: account), all: all)
            XCTAssertFalse(revoked, "the issuer that could revoke it is no longer configured")
            XCTAssertNil(try store.loadIndex("corp")?.accounts.first, "logout all: \(all), account: \(account ?? "none")")
            XCTAssertNil(try store.load(StoreKeys.account("alice", of: "corp")), "an explicit logout removes it")
        }

        _ = try await a.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        let b2 = service(issuer: Self.issuerB)
        _ = try await b2.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        let fresh = try await token(b2)
        XCTAssertEqual(fresh, "at-b1", "a login is an explicit act: it replaces the other issuer's session")
        XCTAssertEqual(try storedRecord()?.accessToken, "at-b1")
    }

    /// Records written before sessions named their issuer keep working, whatever the configuration names.
    func testARecordWithoutAnIssuerStillWorks() async throws {
        let old = Session(accessToken: "at-old", expiresAt: Date().addingTimeInterval(3600), obtainedAt: Date(), generation: 1, account: "alice")
        try store.save(old, for: StoreKeys.account("alice", of: "corp"))
        try store.saveIndex(AccountIndex(accounts: ["alice"], defaultAccount: "alice"), for: "corp")
        let b = service(issuer: Self.issuerB)
        let token = try await token(b)
        XCTAssertEqual(token, "at-old")
    }

    /// Where the former issuer's discovery names a revocation endpoint, the explicit logout that
    /// removes its session revokes it there — at the server that issued it, never the new one.
    func testAnExplicitLogoutRevokesTheOtherIssuersSessionWhereItCameFrom() async throws {
        let server = FakeOAuthServer()
        server.answer("/a/.well-known/openid-configuration", FakeOAuthServer.json(200, [
            "issuer": .string(Self.issuerA), "token_endpoint": .string(Self.issuerA + "/token"), "revocation_endpoint": .string(Self.issuerA + "/revoke")]))
        server.answer("/b/.well-known/openid-configuration", FakeOAuthServer.json(200, ["issuer": .string(Self.issuerB), "token_endpoint": .string(Self.issuerB + "/token")]))
        server.answer("/a/token", FakeOAuthServer.json(200, ["access_token": "at-a1", "refresh_token": "rt-a1", "token_type": "Bearer", "expires_in": 3600]))
        server.answer("/a/revoke", HTTPResponse(status: 200))
        _ = try await service(issuer: Self.issuerA, server: server).login(provider: "corp", credentials: .password(username: "alice", password: "pw"))

        let revoked = try await service(issuer: Self.issuerB, server: server).logout(provider: "corp", all: true)
        XCTAssertTrue(revoked)
        let revocations = server.requests.filter { $0.url.hasSuffix("/revoke") }
        XCTAssertEqual(revocations.map(\.url), [Self.issuerA + "/revoke"])
        XCTAssertTrue(String(decoding: revocations.first?.body ?? [], as: UTF8.self).contains("token=rt-a1"))
        XCTAssertFalse(server.requests.contains { $0.url.hasPrefix(Self.issuerB) && $0.method == "POST" }, "nothing of A's went to B")
        XCTAssertNil(try store.loadIndex("corp")?.accounts.first)
    }
}
