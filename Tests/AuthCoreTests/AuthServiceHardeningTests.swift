@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import Wire
import TestSupport
import XCTest

/// Issue 10 (hardening): what the agent does with odd servers, odd input and a
/// store that cannot be written, through `AuthService` itself over a scripted
/// transport — the same calls the protocol methods make.
final class AuthServiceHardeningTests: XCTestCase {
    // MARK: Fixtures

    /// A store whose writes fail on demand, as a read-only or full directory's do.
    final class BreakableStore: SessionStore, @unchecked Sendable {
        let inner = MemorySessionStore()
        let broken = TestBox(false)
        static let problem = SessionStoreError.io("cannot create /state/auth-agent/.corp.json.tmp-1-2: Read-only file system")

        func load(_ provider: String) throws -> Session? { try inner.load(provider) }
        func save(_ session: Session, for provider: String) throws {
            if broken.get() { throw Self.problem }
            try inner.save(session, for: provider)
        }
        func remove(_ provider: String) throws { try inner.remove(provider) }
        func tryLock(_ provider: String) throws -> StoreLock? { try inner.tryLock(provider) }
        func modificationStamp(_ provider: String) -> String? { inner.modificationStamp(provider) }
        func loadIndex(_ provider: String) throws -> AccountIndex? { try inner.loadIndex(provider) }
        func saveIndex(_ index: AccountIndex, for provider: String) throws {
            if broken.get() { throw Self.problem }
            try inner.saveIndex(index, for: provider)
        }
        func indexStamp(_ provider: String) -> String? { inner.indexStamp(provider) }
    }

    let transport = FakeOAuthServer()
    let clock = FakeClock()
    let log = WarningLog()
    let events = TestBox<[AuthEvent]>([])

    static let oauthProvider = ProviderConfig(
        id: "corp", displayName: "Corp SSO", flow: .password, origins: [Origin(url: "https://corp.example.com")!],
        tokenEndpoint: "https://idp.example.com/token", revocationEndpoint: "https://idp.example.com/revoke", clientId: "cli")
    static let sessionProvider = ProviderConfig(
        id: "api", displayName: "Example API", flow: .session, origins: [Origin(url: "https://api.example.com")!],
        loginEndpoint: "https://api.example.com/sessions", loginBody: ["u": "{{username}}", "p": "{{password}}"],
        tokenPointer: JSONPointer("/jwt"), refreshEndpoint: "https://api.example.com/sessions/refresh")
    static let tokenProvider = ProviderConfig(id: "pat", displayName: "Personal token", flow: .token,
                                              origins: [Origin(url: "https://pat.example.com")!])

    func service(_ store: SessionStore = MemorySessionStore(), lockTimeout: Double = 2) -> AuthService {
        let config = AgentConfig(refreshWindowSeconds: 60, store: .memory,
                                 providers: [Self.oauthProvider, Self.sessionProvider, Self.tokenProvider])
        let events = self.events
        return AuthService(config: config, store: store, transport: transport, clock: clock,
                           logger: Logger(level: .debug, sink: log.sink), httpTimeout: 2, lockTimeout: lockTimeout,
                           events: { event in events.update { $0.append(event) } })
    }

    static let alice = Credentials.password(username: "alice", password: "wonderland")

    // The service's answers in their protocol shape, so assertions read like the protocol.

    func login(_ service: AuthService, _ provider: String = "corp", _ credentials: Credentials? = alice) async throws -> JSONValue {
        LoginMethod.encode(result: try await service.login(provider: provider, credentials: credentials))
    }

    func refresh(_ service: AuthService, _ provider: String = "corp") async throws -> JSONValue {
        let r = try await service.refresh(provider: provider, failedAuthorization: nil)
        return ["provider": .string(r.provider), "refreshed": .bool(r.refreshed), "expiresAt": RFC3339.json(r.expiresAt)]
    }

    func token(_ service: AuthService, _ provider: String = "corp") async throws -> JSONValue {
        let t = try await service.token(provider: provider)
        return ["accessToken": .string(t.accessToken), "tokenType": .string(t.tokenType), "expiresAt": RFC3339.json(t.expiresAt)]
    }

    func sign(_ service: AuthService, _ url: String) async throws -> JSONValue {
        let decision: SignDecision
        if let now = try service.signNow(url: url, provider: nil) { decision = now } else { decision = try await service.sign(url: url, provider: nil) }
        return SignAnswers().value(for: decision)
    }

    func logout(_ service: AuthService, _ provider: String = "corp") async throws -> JSONValue {
        ["revoked": .bool(try await service.logout(provider: provider))]
    }

    /// The `AuthError` an async call throws; fails the test when it succeeds.
    func authError(_ body: () async throws -> JSONValue, file: StaticString = #filePath, line: UInt = #line) async -> AuthError? {
        do {
            let value = try await body()
            XCTFail("expected an error, got \(value)", file: file, line: line)
        } catch let error as AuthError {
            return error
        } catch {
            XCTFail("expected an AuthError, got \(error)", file: file, line: line)
        }
        return nil
    }

    func state(_ service: AuthService, _ provider: String = "corp") -> String? {
        service.status(providers: [provider]).first.map { $0.session == nil ? "loggedOut" : "loggedIn" }
    }

    static func jwt(exp: Double) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8))
        let payload = Base64URL.encode(Array(#"{"sub":"alice","exp":\#(Int(exp))}"#.utf8))
        return "\(header).\(payload).sig"
    }

    // MARK: Item 6: a login or refresh that is not saved fails

    func testLoginThatCannotBeSavedFailsAndLeavesNothingBehind() async throws {
        let store = BreakableStore()
        store.broken.set(true)
        let service = service(store)
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        let error = await authError { try await self.login(service) }
        XCTAssertEqual(error?.code, .storeUnavailable)
        XCTAssertEqual(error?.rpcError.code, 1010)
        XCTAssertEqual(error?.rpcError.data?["retryable"], true)
        XCTAssertEqual(error?.rpcError.data?["reason"], "storeUnavailable")
        XCTAssertTrue(error?.message.contains("/state/auth-agent/.corp.json.tmp-1-2: Read-only file system") == true, error?.message ?? "")
        XCTAssertFalse(error?.message.contains("at-1") == true)
        XCTAssertEqual(state(service), "loggedOut", "an unsaved login is not installed")
        XCTAssertEqual(events.get(), [], "nobody is told about a login that did not happen")
        XCTAssertTrue(log.all.contains { $0.contains("could not write the session of corp") }, "\(log.all)")
        let notLoggedIn = await authError { try await self.token(service) }
        XCTAssertEqual(notLoggedIn?.code, .notLoggedIn)
    }

    func testRefreshThatCannotBeSavedFailsButKeepsTheNewTokens() async throws {
        let store = BreakableStore()
        let service = service(store)
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        transport.answer("/token", 200, #"{"access_token":"at-2","refresh_token":"rt-2","expires_in":3600}"#)
        _ = try await login(service)
        store.broken.set(true)
        let error = await authError { try await self.refresh(service) }
        XCTAssertEqual(error?.code, .storeUnavailable)
        // The server may already have retired rt-1: the new tokens stay in use in this process.
        let current = try await token(service)
        XCTAssertEqual(current["accessToken"], "at-2")
        XCTAssertEqual(try store.inner.load(StoreKeys.account("alice", of: "corp"))?.accessToken, "at-1", "the store kept what it had")
    }

    // MARK: Item 10: a lock that cannot be taken is not "busy"

    func testSymlinkAtTheLockFileIsAStoreErrorNamingThePath() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileSessionStore(directory: directory.url.appendingPathComponent("state"), warn: log.sink)
        let elsewhere = directory.url.appendingPathComponent("elsewhere").path
        let lockPath = store.directory.appendingPathComponent("corp.lock").path
        XCTAssertEqual(symlink(elsewhere, lockPath), 0)
        let service = service(store)
        transport.answer("/token", 200, #"{"access_token":"at-1","expires_in":3600}"#)
        let error = await authError { try await self.login(service) }
        XCTAssertEqual(error?.code, .storeUnavailable)
        XCTAssertEqual(error?.code.retryable, true)
        XCTAssertTrue(error?.message.contains(lockPath) == true, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("symbolic link") == true, error?.message ?? "")
        XCTAssertTrue(log.all.contains { $0.contains(lockPath) }, "the problem is logged: \(log.all)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: elsewhere), "the link was not followed")
        XCTAssertEqual(state(service), "loggedOut")
    }

    func testALockHeldByAnotherAgentIsStillBusy() async throws {
        let store = MemorySessionStore()
        let service = service(store, lockTimeout: 0.2)
        transport.answer("/token", 200, #"{"access_token":"at-1","expires_in":3600}"#)
        let held = try XCTUnwrap(try store.tryLock("corp"))
        defer { held.unlock() }
        let error = await authError { try await self.login(service) }
        XCTAssertEqual(error?.code, .authServerUnavailable)
    }

    // MARK: Item 9: tokens that would inject header lines

    func testOAuthTokensThatCannotGoInAHeaderAreRefused() async throws {
        let service = service()
        for bad in [#"at\r\nX-Evil: 1"#, #"at\nX"#, #"at\u0000"#, "at with spaces", #"at\t"#, "at\u{e9}"] {
            transport.answer("/token", 200, #"{"access_token":"\#(bad)","expires_in":3600}"#)
            let error = await authError { try await self.login(service) }
            XCTAssertEqual(error?.code, .loginDenied, bad)
            XCTAssertEqual(error?.code.retryable, false)
            XCTAssertTrue(error?.message.contains("Authorization header") == true, error?.message ?? "")
            XCTAssertEqual(state(service), "loggedOut", bad)
        }
    }

    func testSessionAPITokenThatCannotGoInAHeaderIsRefused() async throws {
        let service = service()
        transport.answer("/sessions", 200, #"{"jwt":"abc\r\nX-Evil: 1"}"#)
        let error = await authError { try await self.login(service, "api") }
        XCTAssertEqual(error?.code, .loginDenied)
        XCTAssertTrue(error?.message.contains("Authorization header") == true, error?.message ?? "")
        XCTAssertEqual(state(service, "api"), "loggedOut")
    }

    func testPastedTokenThatCannotGoInAHeaderIsRefused() async throws {
        let service = service()
        for bad in ["ghp_abc\r\n", "ghp_abc\nX-Evil: 1", "ghp\u{0}abc", "ghp abc", "ghp_\u{e9}"] {
            let error = await authError { try await self.login(service, "pat", .token(bad)) }
            XCTAssertEqual(error?.code, .invalidCredentials, bad.debugDescription)
            XCTAssertTrue(error?.message.contains("Authorization header") == true, error?.message ?? "")
            XCTAssertFalse(error?.message.contains("ghp") == true, "the token is not echoed")
        }
        XCTAssertEqual(state(service, "pat"), "loggedOut")
        _ = try await login(service, "pat", .token("ghp_abc"))
        let signed = try await sign(service, "https://pat.example.com/x")
        XCTAssertEqual(signed["headers"]?["Authorization"], "Bearer ghp_abc")
    }

    func testStoredSessionWithAnInjectingTokenIsSetAsideAsCorrupt() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try FileSessionStore(directory: directory.url, warn: log.sink)
        for (index, (key, value)) in [("accessToken", #"at\r\nX-Evil: 1"#), ("tokenType", #"Bearer\u0000"#), ("accessToken", "a b")].enumerated() {
            var record: JSONObject = ["accessToken": "at", "tokenType": "Bearer", "obtainedAt": "2026-11-22T00:00:00Z", "generation": 1]
            record[key] = try JSONParser.parse("\"\(value)\"")
            let id = "p\(index)"
            let file = directory.url.appendingPathComponent("\(id).json")
            try Data(JSONSerializer.bytes(["version": 1, "session": .object(record)])).write(to: file)
            XCTAssertNil(try store.load(id), value)
            XCTAssertFalse(FileManager.default.fileExists(atPath: file.path), "moved aside")
        }
        XCTAssertEqual(log.all.filter { $0.contains("Authorization header") }.count, 3, "\(log.all)")
    }

    // MARK: Item 10: unusable expires_in

    func testUnusableExpiresInMeansOneHourRefreshedBeforeItAndWarnedOnce() async throws {
        let service = service()
        let start = clock.now()
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":-1}"#)
        transport.answer("/token", 200, #"{"access_token":"at-2","refresh_token":"rt-2","expires_in":1e308}"#)
        transport.answer("/token", 200, #"{"access_token":"at-3","refresh_token":"rt-3","expires_in":9223372036854775807}"#)
        let result = try await login(service)
        XCTAssertEqual(result["expiresAt"], RFC3339.json(start.addingTimeInterval(3600)), "reported like any other expiry")
        clock.advance(3600 - 5)  // inside the 10 s margin: callers wait for the refresh
        let signed = try await sign(service, "https://corp.example.com/x")
        XCTAssertEqual(signed["headers"]?["Authorization"], "Bearer at-2", "refreshed before the assumed expiry")
        XCTAssertEqual(signed["expiresAt"], RFC3339.json(clock.now().addingTimeInterval(3600)))
        _ = try await refresh(service)  // after a 401
        let current = try await token(service)
        XCTAssertEqual(current["accessToken"], "at-3")
        XCTAssertEqual(log.all.filter { $0.contains("expires_in") }.count, 1, "warned once: \(log.all)")
        XCTAssertFalse(log.all.joined().contains("at-"), "no token in the log")
    }

    // MARK: Item 10: malformed token responses

    func testMalformedTokenResponseFailsTheLoginWithoutRetry() async throws {
        let service = service()
        let cases = [
            (#"{"access_token":"at-1","access_token":"at-2","expires_in":3600}"#, "duplicate key"),
            (#"{"access_token":"at-1","expires_in":3600,"x":18446744073709551616}"#, "64 bits"),
            (#"{"access_token":"at-1","scope":{"a":1,"a":2}}"#, "duplicate key"),
            ("<html>ok</html>", "not valid JSON"),
            (#"{"token":"at-1"}"#, "no access_token"),
        ]
        for (body, problem) in cases {
            transport.answer("/token", 200, body)
            let error = await authError { try await self.login(service) }
            XCTAssertEqual(error?.code, .loginDenied, body)
            XCTAssertEqual(error?.rpcError.data?["retryable"], false, body)
            XCTAssertTrue(error?.message.contains(problem) == true, "\(error?.message ?? "") should name \(problem)")
            XCTAssertFalse(error?.message.contains("at-1") == true)
        }
    }

    func testMalformedRefreshResponseKeepsTheSession() async throws {
        let service = service()
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        transport.answer("/token", 200, #"{"access_token":"at-2","access_token":"at-2","refresh_token":"rt-2"}"#)
        _ = try await login(service)
        let error = await authError { try await self.refresh(service) }
        XCTAssertEqual(error?.code, .loginDenied)
        XCTAssertEqual(error?.code.retryable, false)
        XCTAssertTrue(error?.message.contains("duplicate key") == true, error?.message ?? "")
        XCTAssertEqual(state(service), "loggedIn", "the session is kept")
        let current = try await token(service)
        XCTAssertEqual(current["accessToken"], "at-1", "the current token stays usable while valid")
        XCTAssertFalse(events.get().contains { if case .loggedOut = $0 { return true } else { return false } })
        XCTAssertTrue(log.all.contains { $0.contains("duplicate key") && $0.contains("kept") }, "\(log.all)")
    }

    func testSessionRefreshWithAnInjectingTokenKeepsTheSession() async throws {
        let service = service()
        let jwt = Self.jwt(exp: clock.now().timeIntervalSince1970 + 3600)
        transport.answer("/sessions", 200, #"{"jwt":"\#(jwt)"}"#)
        transport.answer("/sessions/refresh", 200, #"{"jwt":"x\r\nX-Evil: 1"}"#)
        _ = try await login(service, "api")
        let error = await authError { try await self.refresh(service, "api") }
        XCTAssertEqual(error?.code, .loginDenied)
        let current = try await token(service, "api")
        XCTAssertEqual(current["accessToken"], .string(jwt))
    }

    // MARK: Item 10: an already expired session JWT

    func testSessionLoginWithAnAlreadyExpiredJWTIsRefused() async throws {
        let service = service()
        transport.answer("/sessions", 200, #"{"jwt":"\#(Self.jwt(exp: clock.now().timeIntervalSince1970 - 10))"}"#)
        let error = await authError { try await self.login(service, "api") }
        XCTAssertEqual(error?.code, .loginDenied)
        XCTAssertEqual(error?.code.retryable, false)
        XCTAssertTrue(error?.message.contains("expired") == true, error?.message ?? "")
        XCTAssertEqual(state(service, "api"), "loggedOut")
        XCTAssertEqual(events.get(), [])
    }

    // MARK: Item 15: servers that answer errors with empty bodies, and a lowercase token type

    func testEmpty403OnLoginIsInvalidCredentials() async throws {
        let service = service()
        transport.answer("/token", 403, "", headers: [:])
        let error = await authError { try await self.login(service) }
        XCTAssertEqual(error?.code, .invalidCredentials)
        XCTAssertEqual(state(service), "loggedOut")
    }

    func testEmpty400Or401OnRefreshLogsOutAsExpired() async throws {
        for status in [400, 401] {
            let service = service()
            events.set([])
            transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
            _ = try await login(service)
            transport.answer("/token", status, "", headers: [:])
            let error = await authError { try await self.refresh(service) }
            XCTAssertEqual(error?.code, .sessionExpired, "\(status)")
            XCTAssertEqual(state(service), "loggedOut")
            XCTAssertEqual(events.get().last, .loggedOut(provider: "corp", account: "alice", reason: .expired), "\(status)")
        }
    }

    func testOtherEmptyRefreshFailuresAreTransientAndKeepTheSession() async throws {
        for status in [408, 429, 500, 502, 503, 302] {
            let service = service()
            transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
            _ = try await login(service)
            transport.answer("/token", status, "", headers: [:])
            let error = await authError { try await self.refresh(service) }
            XCTAssertEqual(error?.code, .authServerUnavailable, "\(status)")
            XCTAssertEqual(state(service), "loggedIn", "\(status)")
        }
    }

    func testLowercaseBearerIsSignedAsBearer() async throws {
        let service = service()
        transport.answer("/token", 200, #"{"access_token":"at-1","token_type":"bearer","expires_in":3600}"#)
        _ = try await login(service)
        let signed = try await sign(service, "https://corp.example.com/x")
        XCTAssertEqual(signed["headers"]?["Authorization"], "Bearer at-1")
        let current = try await token(service)
        XCTAssertEqual(current["tokenType"], "Bearer")
    }

    // MARK: Item 16: a public client whose revocation is refused

    func testLogoutOfAPublicClientWhoseRevocationIsRefused() async throws {
        let store = MemorySessionStore()
        let service = service(store)
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        transport.answer("/revoke", 401, #"{"error":"invalid_client"}"#)
        _ = try await login(service)
        let result = try await logout(service)
        XCTAssertEqual(result, ["revoked": false])
        XCTAssertEqual(transport.count("/revoke"), 1)
        let revocation = try XCTUnwrap(transport.requests.last)
        XCTAssertNil(revocation.header("Authorization"), "a public client sends no secret")
        XCTAssertTrue(String(decoding: revocation.body ?? [], as: UTF8.self).contains("client_id=cli"))
        XCTAssertEqual(state(service), "loggedOut")
        XCTAssertNil(try store.load(StoreKeys.account("alice", of: "corp")), "the local session is gone")
        XCTAssertEqual(events.get().last, .loggedOut(provider: "corp", account: "alice", reason: .logout))
    }
}
