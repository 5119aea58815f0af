@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import XCTest

/// Issue 15 through `AuthService` over a fake OAuth server and a fake clock:
/// several accounts per provider, which account a request uses, and tokens
/// shaped per request sharing one rotating refresh token — each in milliseconds.
final class AccountsServiceTests: XCTestCase {
    /// A password-grant token endpoint and userinfo: users are their own `sub`; every
    /// refresh rotates the refresh token and retires the old one (a reuse is `invalid_grant`).
    /// Resources it does not know get `invalid_target`; scopes beyond `read write`, `invalid_scope`.
    final class FakeServer: HTTPTransport, @unchecked Sendable {
        private let lock = NSLock()
        private var serial = 0
        /// Live refresh token → user.
        private var refreshTokens: [String: String] = [:]
        /// Grants per "user|scope|resource".
        private(set) var grants: [String: Int] = [:]
        var lifetime = 3600
        /// Users whose userinfo says only this `sub`, as django-oauth-toolkit's does (`{"sub": "1"}`).
        var subjects: [String: String] = [:]
        /// Who approves the next device login.
        var deviceUser = "alice"
        /// Live refresh token → the client it was issued to; a refresh by another client is `invalid_grant`.
        private var issuedTo: [String: String] = [:]
        /// The client of each grant, in order.
        private(set) var clients: [String] = []
        /// Seconds each token request takes (to let callers pile up).
        var latency: UInt64 = 0

        func count(_ user: String, scope: String = "", resource: String = "") -> Int {
            lock.lock()
            defer { lock.unlock() }
            return grants["\(user)|\(scope)|\(resource)"] ?? 0
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            if latency > 0 { try await Task.sleep(nanoseconds: latency) }
            let path = URL(string: request.url)?.path ?? ""
            if path == "/userinfo" {
                let token = request.headers.first { $0.0 == "Authorization" }?.1 ?? ""
                let user = token.split(separator: ".").dropFirst().first.map(String.init) ?? "?"
                if let sub = lock.withLock({ subjects[user] }) { return Self.json(200, "{\"sub\":\"\(sub)\"}") }
                return Self.json(200, "{\"sub\":\"\(user)\",\"preferred_username\":\"\(user)\"}")
            }
            if path == "/device_authorization" {
                return Self.json(200, #"{"device_code":"dc","user_code":"UC","verification_uri":"https://idp.example.com/device","interval":1,"expires_in":600}"#)
            }
            let form = Dictionary(String(decoding: request.body ?? [], as: UTF8.self).split(separator: "&").map { pair -> (String, String) in
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
                return (parts[0].replacingOccurrences(of: "+", with: " "), parts.count > 1 ? parts[1].replacingOccurrences(of: "+", with: " ") : "")
            }, uniquingKeysWith: { $1 })
            return grant(form)
        }

        private func grant(_ form: [String: String]) -> HTTPResponse {
            lock.lock()
            defer { lock.unlock() }
            let user: String
            switch form["grant_type"] {
            case "password":
                user = form["username"] ?? "?"
            case "urn:ietf:params:oauth:grant-type:device_code":
                user = deviceUser
            case "refresh_token":
                guard issuedTo[form["refresh_token"] ?? ""] == form["client_id"],
                      let owner = refreshTokens.removeValue(forKey: form["refresh_token"] ?? "") else {
                    return Self.json(400, #"{"error":"invalid_grant"}"#)
                }
                user = owner
            default:
                return Self.json(400, #"{"error":"unsupported_grant_type"}"#)
            }
            let scope = form["scope"] ?? ""
            let resource = form["resource"] ?? ""
            if !resource.isEmpty && !resource.hasPrefix("https://known.example.com") {
                if let token = form["refresh_token"] { refreshTokens[token] = user }  // nothing spent
                return Self.json(400, #"{"error":"invalid_target","error_description":"unknown resource"}"#)
            }
            if scope.split(separator: " ").contains(where: { !["read", "write"].contains($0) }) {
                if let token = form["refresh_token"] { refreshTokens[token] = user }
                return Self.json(400, #"{"error":"invalid_scope","error_description":"admin is not granted"}"#)
            }
            serial += 1
            grants["\(user)|\(scope)|\(resource)", default: 0] += 1
            let refresh = "rt.\(user).\(serial)"
            refreshTokens[refresh] = user
            issuedTo[refresh] = form["client_id"]
            clients.append(form["client_id"] ?? "")
            return Self.json(200, "{\"access_token\":\"at.\(user).\(serial)\",\"token_type\":\"Bearer\",\"expires_in\":\(lifetime),\"refresh_token\":\"\(refresh)\"}")
        }

        var liveRefreshTokens: Set<String> {
            lock.lock()
            defer { lock.unlock() }
            return Set(refreshTokens.keys)
        }

        static func json(_ status: Int, _ body: String) -> HTTPResponse {
            HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
        }
    }

    let server = FakeServer()
    let clock = FakeClock()
    let store = MemorySessionStore()
    let events = TestBox<[AuthEvent]>([])

    static let read = TokenShape(scopes: ["read"])
    static let known = TokenShape(resource: "https://known.example.com/api")

    func service(origins: [Origin: TokenShape] = [:], flows: [Flow] = [.password], flowClients: [Flow: ProviderConfig.FlowClient] = [:]) -> AuthService {
        var corp = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: .password,
                                  origins: [Origin(url: "https://corp.example.com")!, Origin(url: "https://files.example.com")!],
                                  tokenEndpoint: "https://idp.example.com/token", userinfoEndpoint: "https://idp.example.com/userinfo", clientId: "cli",
                                  deviceAuthorizationEndpoint: "https://idp.example.com/device_authorization")
        corp.originShapes = origins
        corp.flows = flows
        corp.flowClients = flowClients
        let events = self.events
        return AuthService(config: AgentConfig(refreshWindowSeconds: 60, store: .memory, providers: [corp]), store: store, transport: server,
                           clock: clock, logger: Logger(level: .error, sink: { _ in }), httpTimeout: 2, lockTimeout: 2,
                           events: { event in events.update { $0.append(event) } })
    }

    @discardableResult
    func login(_ service: AuthService, _ user: String) async throws -> LoginResult {
        try await service.login(provider: "corp", credentials: .password(username: user, password: "pw"))
    }

    func token(_ service: AuthService, _ account: String? = nil, _ shape: TokenShape = .none) async throws -> String {
        try await service.token(provider: "corp", account: AccountChoice(account: account), shape: shape).accessToken
    }

    // MARK: Accounts

    func testAnotherIdentityAddsAnAccountAndTheSameIdentityReplacesItsOwn() async throws {
        let service = service()
        let alice = try await login(service, "alice")
        XCTAssertEqual(alice.account, "alice")
        try await login(service, "bob")
        let first = try await token(service, "alice")
        try await login(service, "alice")
        let status = try XCTUnwrap(service.status().first)
        XCTAssertEqual(status.accounts.map(\.id), ["alice", "bob"], "logging in again as alice replaced her session")
        XCTAssertEqual(status.accounts.map(\.isDefault), [true, false], "the first account logged in is the default")
        let replaced = try await token(service, "alice")
        XCTAssertNotEqual(replaced, first)
        XCTAssertEqual(events.get().map(\.account), ["alice", "bob", "alice"])
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["alice", "bob"], defaultAccount: "alice"))
    }

    func testARequestUsesItsAccountThenTheConnectionsSelectionThenTheDefault() async throws {
        let service = service()
        try await login(service, "alice")
        try await login(service, "bob")
        let got525 = try await token(service)
        XCTAssertTrue(got525.hasPrefix("at.alice."), "default")
        let got36 = try await token(service, "bob")
        XCTAssertTrue(got36.hasPrefix("at.bob."), "named")
        let selected = AccountChoice(selected: ["corp": "bob"])
        let viaSelection = try await service.token(provider: "corp", account: selected).accessToken
        XCTAssertTrue(viaSelection.hasPrefix("at.bob."), "selected")
        let named = AccountChoice(account: "alice", selected: ["corp": "bob"])
        let viaName = try await service.token(provider: "corp", account: named).accessToken
        XCTAssertTrue(viaName.hasPrefix("at.alice."), "named beats selected")
        XCTAssertEqual(service.status(choice: selected).first?.account, "bob")
        do {
            _ = try await token(service, "carol")
            XCTFail("carol is not logged in")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .notLoggedIn)
            XCTAssertEqual(error.message, "Account carol is not logged in to Corp SSO.")
        }
    }

    // MARK: People, not ids (issue 20 item 2)

    /// A server whose userinfo says only `sub: "1"`: the account is `1`, but the person is
    /// shown by the username typed at login, and every request may name the account by it.
    func testAnAccountIsShownAndNamedByTheNameItsUserLogsInWith() async throws {
        server.subjects = ["alice": "1", "bob": "2"]
        let service = service()
        let alice = try await login(service, "alice")
        XCTAssertEqual(alice.account, "1")
        XCTAssertEqual(alice.user, ["sub": "1", "username": "alice"], "the username typed is kept in the session's user")
        XCTAssertEqual(AccountNames.display(alice.user, account: alice.account), "alice")
        try await login(service, "bob")
        let bob = try await token(service, "bob")
        XCTAssertTrue(bob.hasPrefix("at.bob."), "named by the username typed")
        let shouted = try await token(service, "BOB")
        XCTAssertTrue(shouted.hasPrefix("at.bob."), "compared case-insensitively")
        let byID = try await token(service, "2")
        XCTAssertTrue(byID.hasPrefix("at.bob."), "and by id")
        XCTAssertEqual(try service.account(named: "Alice", provider: "corp"), "1", "git-credential's username resolves the same way")
        XCTAssertNil(try service.account(named: "oauth2", provider: "corp"))
        XCTAssertEqual(try service.checkAccount(provider: "corp", account: "bob"), "2", "selectAccount keeps the id")
        let madeDefault = try await service.setDefaultAccount(provider: "corp", account: "BOB")
        XCTAssertEqual(madeDefault, "2")
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["1", "2"], defaultAccount: "2"))
        _ = try await service.logout(provider: "corp", account: AccountChoice(account: "alice"))
        XCTAssertEqual(service.status().first?.accounts.map(\.id), ["2"], "logout by name ended alice's account")
        XCTAssertEqual(service.status().first?.accounts.map { AccountNames.display($0.user, account: $0.id) }, ["bob"])
    }

    /// A name that fits several accounts is refused, listing them; an id always wins over a name.
    func testANameSeveralAccountsGoByIsRefusedListingThem() async throws {
        server.subjects = ["carol": "3", "Carol": "4", "x": "carol"]
        let service = service()
        try await login(service, "carol")
        try await login(service, "Carol")
        do {
            _ = try await token(service, "CAROL")
            XCTFail("ambiguous")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .notLoggedIn)
            XCTAssertEqual(error.message, #""CAROL" names several accounts of Corp SSO: 3 (carol), 4 (Carol); name one by its id."#)
        }
        XCTAssertThrowsError(try service.account(named: "carol", provider: "corp"), "git-credential is refused too")
        try await login(service, "x")  // account id "carol"
        let exact = try await token(service, "carol")
        XCTAssertTrue(exact.hasPrefix("at.x."), "the account whose id it is")
        XCTAssertEqual(try service.account(named: "4", provider: "corp"), "4")
    }

    // MARK: One provider, several flows (issue 20 item 3)

    /// Whichever flow logs a person in, the account is the provider's: the same person by
    /// another flow replaces their session (keeping the username typed before), another
    /// person adds an account, and the refresh-token grant renews a device login as any other.
    func testEveryFlowOfAProviderLogsIntoTheSameAccounts() async throws {
        server.subjects = ["alice": "1", "bob": "2"]
        let service = service(flows: [.password, .deviceCode])
        try await login(service, "alice")
        // A device login beside a logged-in account leaves its requests running (the login's
        // ordering): by the flow the login names, not the provider's default.
        XCTAssertFalse(service.loginLeavesAccounts(provider: "corp", flow: nil))
        XCTAssertTrue(service.loginLeavesAccounts(provider: "corp", flow: .deviceCode))
        let again = try await service.login(provider: "corp", flow: .deviceCode, credentials: nil)
        XCTAssertEqual(again.account, "1", "the same person, by another flow: the same account")
        XCTAssertEqual(again.user, ["sub": "1", "username": "alice"], "the name typed at the password login stays")
        server.deviceUser = "bob"
        let bob = try await service.login(provider: "corp", flow: .deviceCode, credentials: nil)
        XCTAssertEqual(bob.account, "2")
        XCTAssertNil(AccountNames.name(bob.user), "nobody typed bob's name")
        let status = try XCTUnwrap(service.status().first)
        XCTAssertEqual(status.flows, [.password, .deviceCode])
        XCTAssertEqual(status.flow, .password, "the default is the first")
        XCTAssertEqual(status.accounts.map(\.id), ["1", "2"])
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["1", "2"], defaultAccount: "1"))
        let first = try await token(service, "2")
        clock.advance(3600)
        let renewed = try await token(service, "2")
        XCTAssertNotEqual(renewed, first)
        XCTAssertEqual(server.count("bob"), 2, "the device grant, then one refresh_token grant")
        do {
            _ = try await service.login(provider: "corp", flow: .authorizationCode, credentials: nil)
            XCTFail("not one of its flows")
        } catch {
            XCTAssertEqual(error.message, "Corp SSO has no authorizationCode login; its flows: password, deviceCode.")
        }
    }

    /// A server that allows one grant per client (django-oauth-toolkit) gets a client per flow:
    /// each session is refreshed by the client that logged it in — here and in another agent
    /// that reads it from the store — since a refresh token works only for its own client.
    func testASessionIsRenewedByTheClientOfTheFlowThatLoggedItIn() async throws {
        let clients: [Flow: ProviderConfig.FlowClient] = [.deviceCode: .init(clientId: "dev")]
        let service = service(flows: [.password, .deviceCode], flowClients: clients)
        try await login(service, "alice")
        server.deviceUser = "bob"
        _ = try await service.login(provider: "corp", flow: .deviceCode, credentials: nil)
        clock.advance(3600)
        _ = try await token(service, "alice")
        _ = try await token(service, "bob")
        XCTAssertEqual(server.clients, ["cli", "dev", "cli", "dev"], "each login and its refresh by one client")
        clock.advance(3600)
        let other = self.service(flows: [.password, .deviceCode], flowClients: clients)  // another agent on the store
        let bob = try await token(other, "bob")
        XCTAssertTrue(bob.hasPrefix("at.bob."))
        XCTAssertEqual(server.clients.last, "dev", "the store kept which flow logged bob in")
        XCTAssertEqual(try store.load(StoreKeys.account("bob", of: "corp"))?.flow, .deviceCode)
    }

    func testTheDefaultIsKeptInTheStoreAndMovesOnWhenItsAccountLogsOut() async throws {
        let first = service()
        try await login(first, "alice")
        try await login(first, "bob")
        try await first.setDefaultAccount(provider: "corp", account: "bob")
        let second = service()  // another agent on the same store
        let got825 = try await token(second)
        XCTAssertTrue(got825.hasPrefix("at.bob."))
        _ = try await second.logout(provider: "corp")
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["alice"], defaultAccount: "alice"))
        let got193 = try await token(second)
        XCTAssertTrue(got193.hasPrefix("at.alice."))
        first.checkStore()
        XCTAssertEqual(first.status().first?.accounts.map(\.id), ["alice"], "the other agent saw bob go")
        XCTAssertEqual(events.get().filter { $0.name == .userLoggedOut }.map(\.account), ["bob", "bob"], "logout here, external there")
        _ = try await second.logout(provider: "corp", all: true)
        XCTAssertNil(try store.loadIndex("corp"))
        XCTAssertEqual(second.status().first?.accounts, [])
    }

    /// The list is re-read before it is changed: accounts another agent logged out are not
    /// written back from this agent's memory.
    func testALoginAfterAnotherAgentLoggedEveryoneOutListsOnlyTheNewAccount() async throws {
        let first = service()
        try await login(first, "alice")
        let second = service()
        _ = try await second.logout(provider: "corp", all: true)
        try await login(first, "bob")  // first has not looked at the store since
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["bob"], defaultAccount: "bob"))
    }

    func testAStoreOfThePreviousVersionIsReadAsOneAccount() async throws {
        let legacy = Session(accessToken: "at.alice.0", refreshToken: "rt.alice.0", expiresAt: clock.now().addingTimeInterval(3600),
                             user: ["sub": "alice"], obtainedAt: clock.now(), generation: 7)
        try store.save(legacy, for: "corp")
        let service = service()
        let token = try await token(service)
        XCTAssertEqual(token, "at.alice.0")
        XCTAssertNil(try store.load("corp"), "moved")
        XCTAssertEqual(try store.load(StoreKeys.account("alice", of: "corp"))?.generation, 7)
        XCTAssertEqual(try store.loadIndex("corp"), AccountIndex(accounts: ["alice"], defaultAccount: "alice"))
    }

    // MARK: Shaped tokens

    func testShapedTokensAreCachedPerShapeAndShareOneRotatingRefreshToken() async throws {
        let service = service()
        try await login(service, "alice")
        let own = try await token(service)
        let read = try await token(service, nil, Self.read)
        let again296 = try await token(service, nil, Self.read)
        XCTAssertEqual(again296, read, "cached")
        let api = try await token(service, nil, Self.known)
        XCTAssertEqual(Set([own, read, api]).count, 3)
        XCTAssertEqual(server.count("alice", scope: "read"), 1)
        XCTAssertEqual(server.count("alice", resource: "https://known.example.com/api"), 1)
        let again946 = try await token(service)
        XCTAssertEqual(again946, own, "the session's own token is untouched")
        // Each grant rotated the refresh token; the store holds the live one, with both shaped tokens.
        let stored = try XCTUnwrap(try store.load(StoreKeys.account("alice", of: "corp")))
        XCTAssertEqual(server.liveRefreshTokens, [stored.refreshToken!])
        XCTAssertEqual(Set(stored.shaped.map(\.shape)), [Self.read, Self.known])
        // Another agent on the store uses the stored shaped token without asking the server.
        let fromStore = try await token(self.service(), nil, Self.read)
        XCTAssertEqual(fromStore, read)
        XCTAssertEqual(server.count("alice", scope: "read"), 1)
    }

    func testCallersOfOneShapeShareOneGrantAndEachShapeIsRefreshedOncePerExpiry() async throws {
        let service = service()
        try await login(service, "alice")
        server.latency = 20_000_000
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<20 {
                let shape = i % 2 == 0 ? Self.read : Self.known
                group.addTask { try await service.token(provider: "corp", shape: shape).accessToken }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(tokens.count, 2)
        XCTAssertEqual(server.count("alice", scope: "read"), 1)
        XCTAssertEqual(server.count("alice", resource: "https://known.example.com/api"), 1)
        clock.advance(3600 - 5)  // inside the wait margin: expired for callers
        _ = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<10 { group.addTask { try await service.token(provider: "corp", shape: Self.read).accessToken } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        XCTAssertEqual(server.count("alice", scope: "read"), 2, "one refresh per expiry")
        XCTAssertEqual(server.count("alice", resource: "https://known.example.com/api"), 1, "the other shape was not touched")
        XCTAssertEqual(server.liveRefreshTokens.count, 1, "never two refreshes with one refresh token")
    }

    /// Two shapes expiring together: the refresh that lands first gives the other a new session
    /// that still holds its expired token — that one must refresh too, not hand the old token out.
    func testTwoShapesExpiringTogetherAreEachRefreshed() async throws {
        let service = service()
        try await login(service, "alice")
        let before = [try await token(service, nil, Self.read), try await token(service, nil, Self.known)]
        clock.advance(3600 - 5)
        server.latency = 10_000_000
        let after = try await withThrowingTaskGroup(of: String.self) { group in
            for shape in [Self.read, Self.known, Self.read, Self.known] {
                group.addTask { try await service.token(provider: "corp", shape: shape).accessToken }
            }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        XCTAssertEqual(after.count, 2)
        XCTAssertTrue(after.isDisjoint(with: before), "no expired token handed out")
        XCTAssertEqual(server.count("alice", scope: "read"), 2)
        XCTAssertEqual(server.count("alice", resource: "https://known.example.com/api"), 2)
    }

    func testARefusedShapeIs1013AndTheAccountStays() async throws {
        let service = service()
        try await login(service, "alice")
        for shape in [TokenShape(scopes: ["admin"]), TokenShape(resource: "https://unknown.example.com")] {
            do {
                _ = try await token(service, nil, shape)
                XCTFail("\(shape) is not granted")
            } catch let error as AuthError {
                XCTAssertEqual(error.code, .scopeNotGranted)
                XCTAssertFalse(error.code.retryable)
                XCTAssertTrue(error.message.contains(shape.scopes.isEmpty ? "unknown resource" : "admin is not granted"), error.message)
            }
        }
        let got36 = try await token(service)
        XCTAssertTrue(got36.hasPrefix("at.alice."), "still logged in")
        XCTAssertFalse(events.get().contains { $0.name == .userLoggedOut })
    }

    func testAnOriginConfiguredWithAShapeIsSignedWithThatToken() async throws {
        let service = service(origins: [Origin(url: "https://files.example.com")!: Self.read])
        try await login(service, "alice")
        let files = try await service.sign(url: "https://files.example.com/a", provider: nil)
        let corp = try await service.sign(url: "https://corp.example.com/a", provider: nil)
        guard case .signed(let f) = files, case .signed(let c) = corp else { return XCTFail("both are covered") }
        XCTAssertEqual(f.shape, Self.read)
        XCTAssertNotEqual(f.authorization, c.authorization)
        XCTAssertEqual(server.count("alice", scope: "read"), 1)
        // From memory from now on: the fast path answers without waiting.
        guard case .signed(let again)? = try service.signNow(url: "https://files.example.com/b", provider: nil) else { return XCTFail("in memory") }
        XCTAssertEqual(again.authorization, f.authorization)
    }

    func testAShapedTokenRejectedWithA401IsReplacedAndTheOthersStay() async throws {
        let service = service()
        try await login(service, "alice")
        let read = try await token(service, nil, Self.read)
        let own = try await token(service)
        let result = try await service.refresh(provider: "corp", failedAuthorization: "Bearer \(read)")
        XCTAssertTrue(result.refreshed)
        let replaced = try await token(service, nil, Self.read)
        XCTAssertNotEqual(replaced, read)
        let again68 = try await token(service)
        XCTAssertEqual(again68, own, "only the rejected token was replaced")
        XCTAssertEqual(server.count("alice", scope: "read"), 2)
    }

    /// Issue 19.7: the account list counts the refreshes of each account's tokens within the
    /// window — 5 per token, 20 per account over all its shapes — keeps them through its file
    /// format, drops times a clock set back left in the future, and a broken count never makes
    /// the list unreadable.
    func testTheAccountListCountsRecentRefreshesPerTokenAndAccount() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.25)
        let read = TokenShape(scopes: ["read"])
        var index = AccountIndex(accounts: ["alice", "bob"], defaultAccount: "alice")
        func admit(_ account: String, _ shape: TokenShape = .none, at time: Date? = nil) -> RefreshLimit.Exceeded? {
            index.admitRefresh(of: account, shape: shape, at: time ?? now)
        }
        XCTAssertNil(admit("alice", at: now.addingTimeInterval(-30)))
        for _ in 0..<5 { XCTAssertNil(admit("alice"), "the one 30 s ago is out of the window") }
        XCTAssertEqual(admit("alice"), .token)
        XCTAssertEqual(index.refreshes["alice"]?[""]?.count, 5, "a refused refresh is not counted")
        XCTAssertNil(admit("alice", read), "each token has its own count")
        XCTAssertEqual(index.refreshes["alice"]?["scope=read"], [now])
        for i in 0..<14 { XCTAssertNil(admit("alice", TokenShape(audience: "api://\(i / 4)"))) }
        XCTAssertEqual(admit("alice", TokenShape(audience: "api://new")), .account, "20 of one account's tokens in all")
        XCTAssertNil(admit("bob", read), "each account has its own")
        XCTAssertEqual(try AccountIndex.decode(index.encoded()), index)

        index.refreshes["bob"] = ["": Array(repeating: now.addingTimeInterval(3600), count: 5)]
        XCTAssertNil(admit("bob"))
        XCTAssertEqual(index.refreshes["bob"], ["": [now]])
        index.remove("bob")
        XCTAssertNil(index.refreshes["bob"])

        let odd = try AccountIndex.decode(Array(#"{"version":1,"accounts":["alice"],"refreshes":{"alice":"soon","bob":{"":[1,"x"]}}}"#.utf8))
        XCTAssertEqual(odd, AccountIndex(accounts: ["alice"], refreshes: ["bob": ["": [Date(timeIntervalSince1970: 0.001)]]]))
    }
}
