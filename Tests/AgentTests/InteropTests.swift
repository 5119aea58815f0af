import Foundation
import JSON
import TestSupport
import XCTest

/// The built agent against a real OAuth 2.0 / OpenID Connect server,
/// django-oauth-toolkit (Tests/Interop/start-server.sh), to catch what a dev
/// issuer written alongside the agent cannot: another implementation's reading
/// of the RFCs. One server serves the whole class; each test gets a fresh agent
/// and store. Skipped, with the reason, where python3's venv or PyPI is missing,
/// or when AUTH_AGENT_SKIP_INTEROP=1.
///
/// What DOT is like: one grant type per application, so there is one client per
/// flow; access tokens live 60 s; refresh tokens rotate with reuse protection; its
/// discovery document names neither the device authorization nor the revocation
/// endpoint; it never answers `slow_down`.
final class InteropTests: XCTestCase {
    private static let shared = InteropServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private var server: InteropServer!
    private var directory: URL!

    override func setUpWithError() throws {
        (server, directory) = try Self.shared.setUp(Self.startServer, directoryPrefix: "auth-agent-interop-agent")
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        server = nil
    }

    // MARK: What the agent supports today

    func testPasswordLoginSignAndToken() throws {
        let agent = try spawn([passwordProvider()])
        let login = try agent.result("login", ["provider": "dot-password",
                                               "credentials": ["username": .string(server["username"]), "password": .string(server["password"])]])
        XCTAssertEqual(login["provider"], "dot-password")
        XCTAssertNotNil(login["user"]?.objectValue, "\(login)")
        XCTAssertNotNil(login["expiresAt"]?.stringValue, "DOT says expires_in, so the session has an expiry: \(login)")

        let signed = try agent.result("sign", ["request": ["method": "GET", "url": "https://password.interop.test/items"]])
        XCTAssertEqual(signed["signed"], true, "\(signed)")
        let token = try agent.result("token", ["provider": "dot-password"])
        let access = try XCTUnwrap(token["accessToken"]?.stringValue)
        XCTAssertEqual(token["tokenType"]?.stringValue?.lowercased(), "bearer")
        XCTAssertEqual(signed["headers"]?["Authorization"]?.stringValue, "Bearer " + access)

        XCTAssertEqual(try userinfo(access).status, 200, "DOT accepts the agent's token")
        let introspection = try introspect(access)
        XCTAssertEqual(introspection["active"], true, "\(introspection)")
        XCTAssertEqual(introspection["username"]?.stringValue, server["username"])
        XCTAssertEqual(introspection["client_id"]?.stringValue, server.client("password").id)
    }

    func testClientCredentials() throws {
        let agent = try spawn([serviceProvider()])
        let login = try agent.result("login", ["provider": "dot-service"])
        XCTAssertEqual(login["provider"], "dot-service")
        let access = try XCTUnwrap(try agent.result("token", ["provider": "dot-service"])["accessToken"]?.stringValue)
        let introspection = try introspect(access)
        XCTAssertEqual(introspection["active"], true, "\(introspection)")
        XCTAssertEqual(introspection["client_id"]?.stringValue, server.client("clientCredentials").id)
        let signed = try agent.result("sign", ["request": ["method": "POST", "url": "https://service.interop.test/jobs"]])
        XCTAssertEqual(signed["headers"]?["Authorization"]?.stringValue, "Bearer " + access)
    }

    /// DOT rotates refresh tokens with reuse protection: if the agent kept using the
    /// first refresh token, the second refresh would fail and revoke the session.
    func testRefreshWithRotation() throws {
        let agent = try spawn([passwordProvider()])
        try logInWithPassword(agent)
        let first = try XCTUnwrap(try agent.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)

        let refreshed = try agent.result("refresh", ["provider": "dot-password"])
        XCTAssertEqual(refreshed["refreshed"], true, "\(refreshed)")
        let second = try XCTUnwrap(try agent.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(try introspect(second)["active"], true)

        let again = try agent.result("refresh", ["provider": "dot-password"])
        XCTAssertEqual(again["refreshed"], true, "the rotated refresh token works: \(again)")
        let third = try XCTUnwrap(try agent.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)
        XCTAssertNotEqual(third, second)
        XCTAssertEqual(try introspect(third)["active"], true)
        XCTAssertEqual(try userinfo(third).status, 200)
    }

    func testLogoutRevokesAtTheServer() throws {
        let agent = try spawn([passwordProvider()])
        try logInWithPassword(agent)
        let access = try XCTUnwrap(try agent.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)
        XCTAssertEqual(try introspect(access)["active"], true)

        let logout = try agent.result("logout", ["provider": "dot-password"])
        XCTAssertEqual(logout["revoked"], true, "\(logout)")
        XCTAssertEqual(try userinfo(access).status, 401, "DOT no longer accepts the token")
        XCTAssertEqual(try introspect(access)["active"], false)
    }

    /// The multi-agent race against a real server: DOT rotates refresh tokens and,
    /// with a grace period of 0, revokes the whole token family when one is
    /// reused. Four agents on one store get "a 401" with the same token at the same
    /// moment and all call `refresh`: one refresh reaches DOT, the others take its
    /// result from the store, and the family survives.
    func testFourAgentsRefreshingAtOnceNeverTriggerReuseDetection() throws {
        let agents = try (0..<4).map { _ in try spawn([passwordProvider()]) }
        for agent in agents { _ = try agent.result("subscribe", ["events": ["userLoggedIn", "userLoggedOut", "tokenRefreshed"]]) }
        try logInWithPassword(agents[0])
        for agent in agents.dropFirst() { _ = try agent.notification("userLoggedIn", timeout: 5) }
        for round in 0..<3 {
            let current = try XCTUnwrap(try agents[0].result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)
            let ids = try agents.map { try $0.send("refresh", ["provider": "dot-password", "failedAuthorization": .string("Bearer " + current)]) }
            for (agent, id) in zip(agents, ids) {
                let answer = try agent.answer(to: id, timeout: 20)
                XCTAssertNotNil(answer["result"], "round \(round): \(answer)")
            }
            let tokens = try Set(agents.map { try XCTUnwrap(try $0.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue) })
            XCTAssertEqual(tokens.count, 1, "round \(round): every agent holds the one new token")
            XCTAssertFalse(tokens.contains(current), "round \(round): the token was replaced")
            XCTAssertEqual(try introspect(tokens.first!)["active"], true, "round \(round): DOT accepts it")
        }
        let last = try agents[3].result("refresh", ["provider": "dot-password"])
        XCTAssertEqual(last["refreshed"], true, "the token family is alive: \(last)")
        for agent in agents {
            XCTAssertThrowsError(try agent.notification("userLoggedOut", timeout: 0.3), "no agent was logged out")
        }
    }

    // MARK: Several accounts and shaped tokens (issue 15)

    /// Two people logged in at once on one provider (password flow): the second login adds
    /// an account, `account` and `selectAccount` pick whose token a request gets, and
    /// refreshing or logging out one leaves the other's tokens alive at DOT.
    func testTwoUsersLoggedInAtOnce() throws {
        let agent = try spawn([passwordProvider()])
        let aliceID = try XCTUnwrap(try logInWithPassword(agent, as: 0)["account"]?.stringValue)
        let bobID = try XCTUnwrap(try logInWithPassword(agent, as: 1)["account"]?.stringValue)
        XCTAssertNotEqual(aliceID, bobID, "DOT's userinfo sub tells the two apart")

        let providers = try agent.result("status")["providers"]?.arrayValue ?? []
        let entry = try XCTUnwrap(providers.first { $0["id"] == "dot-password" }, "\(providers)")
        XCTAssertEqual(Set((entry["accounts"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }), [aliceID, bobID], "\(entry)")
        XCTAssertEqual(entry["account"]?.stringValue, aliceID, "the first login stays the default: \(entry)")

        func token(_ params: JSONObject = [:]) throws -> String {
            var params = params
            params["provider"] = "dot-password"
            return try XCTUnwrap(try agent.result("token", .object(params))["accessToken"]?.stringValue)
        }
        let aliceToken = try token(["account": .string(aliceID)])
        let bobToken = try token(["account": .string(bobID)])
        XCTAssertEqual(try introspect(aliceToken)["username"]?.stringValue, "alice")
        XCTAssertEqual(try introspect(bobToken)["username"]?.stringValue, "bob")
        XCTAssertEqual(try token(), aliceToken, "no account named: the default")
        XCTAssertEqual(try token(["account": "Bob"]), bobToken, "DOT's userinfo says only sub: the username typed at login names the account")

        XCTAssertEqual(try agent.result("selectAccount", ["provider": "dot-password", "account": .string(bobID)])["account"]?.stringValue, bobID)
        XCTAssertEqual(try token(), bobToken, "this connection selected bob")
        XCTAssertEqual(try agent.result("refresh", ["provider": "dot-password"])["refreshed"], true)
        let bobRefreshed = try token()
        XCTAssertNotEqual(bobRefreshed, bobToken)
        XCTAssertEqual(try introspect(bobRefreshed)["username"]?.stringValue, "bob")
        XCTAssertEqual(try introspect(aliceToken)["active"], true, "refreshing bob leaves alice's token alone")

        XCTAssertEqual(try agent.result("logout", ["provider": "dot-password", "account": .string(bobID)])["revoked"], true)
        XCTAssertEqual(try introspect(bobRefreshed)["active"], false)
        XCTAssertEqual(try introspect(aliceToken)["active"], true, "logging bob out leaves alice logged in")
        XCTAssertEqual(try token(["account": .string(aliceID)]), aliceToken)
    }

    // MARK: One provider, several flows (issue 20)

    /// DOT allows one grant per application, so the provider lists each flow with its own client.
    /// alice by password and again by device code is one account; her name, typed at the password
    /// login, still names it; the device session is refreshed by the device client (DOT refuses a
    /// refresh token presented by another client).
    func testOneProviderWithTwoFlowsAndAClientEach() throws {
        let device = server.client("deviceCode").id
        var provider = deviceProvider(id: "dot", origin: "https://dot.interop.test")
        provider["clientId"] = nil
        provider["flow"] = [["flow": "deviceCode", "clientId": .string(device)], ["flow": "password", "clientId": .string(server.client("password").id)]]
        let agent = try spawn([.object(provider)])
        let alice = server.users[0]
        let byPassword = try agent.result("login", ["provider": "dot", "flow": "password",
                                                    "credentials": ["username": .string(alice.username), "password": .string(alice.password)]])
        let account = try XCTUnwrap(byPassword["account"]?.stringValue)
        XCTAssertEqual(byPassword["user"]?["username"]?.stringValue, alice.username, "the username typed is kept: \(byPassword)")
        let byDevice = try logInWithDevice(agent, provider: "dot")
        XCTAssertEqual(byDevice["account"]?.stringValue, account, "the same person by another flow: the same account")
        XCTAssertEqual(byDevice["user"]?["username"]?.stringValue, alice.username, "\(byDevice)")

        func token() throws -> String {
            try XCTUnwrap(try agent.result("token", ["provider": "dot", "account": .string(alice.username.uppercased())])["accessToken"]?.stringValue)
        }
        let first = try token()
        XCTAssertEqual(try introspect(first)["client_id"]?.stringValue, device)
        XCTAssertEqual(try agent.result("refresh", ["provider": "dot", "account": .string(alice.username)])["refreshed"], true)
        let refreshed = try token()
        XCTAssertNotEqual(refreshed, first)
        let introspection = try introspect(refreshed)
        XCTAssertEqual(introspection["client_id"]?.stringValue, device, "refreshed by the client that logged the session in")
        XCTAssertEqual(introspection["username"]?.stringValue, alice.username)
    }

    /// A token for fewer scopes than the login's comes from the refresh_token grant with a
    /// narrower `scope`; DOT issues it with exactly that scope, for the same user. A scope DOT
    /// refuses is 1013 and spends nothing: the narrower one still works afterwards.
    func testNarrowingScopeOnRefresh() throws {
        let agent = try spawn([passwordProvider()])
        try logInWithPassword(agent)
        let full = try XCTUnwrap(try agent.result("token", ["provider": "dot-password"])["accessToken"]?.stringValue)
        XCTAssertEqual(try introspect(full)["scope"], "openid read")

        let wider = try agent.call("token", ["provider": "dot-password", "scopes": ["read", "write"]])
        XCTAssertEqual(wider["error"]?["code"], 1013, "DOT answers invalid_scope for a scope outside the grant: \(wider)")
        XCTAssertEqual(wider["error"]?["data"]?["retryable"], false, "\(wider)")

        let narrow = try XCTUnwrap(try agent.result("token", ["provider": "dot-password", "scopes": ["read"]])["accessToken"]?.stringValue)
        XCTAssertNotEqual(narrow, full)
        let introspection = try introspect(narrow)
        XCTAssertEqual(introspection["active"], true, "\(introspection)")
        XCTAssertEqual(introspection["scope"], "read")
        XCTAssertEqual(introspection["username"]?.stringValue, server["username"])
        XCTAssertEqual(try agent.result("token", ["provider": "dot-password", "scopes": ["read"]])["accessToken"]?.stringValue, narrow,
                       "the shaped token is cached under its shape")

        let providers = try agent.result("status")["providers"]?.arrayValue ?? []
        XCTAssertEqual(providers.first { $0["id"] == "dot-password" }?["state"], "loggedIn", "\(providers)")
    }

    // MARK: Interactive flows

    /// Endpoints from `issuer` (OIDC discovery), except the two DOT's document lacks.
    func testDiscoveryWithDeviceCode() throws {
        var provider = deviceProvider(id: "dot-discovered", origin: "https://discovered.interop.test")
        for key in ["tokenEndpoint", "userinfoEndpoint"] { provider[key] = nil }
        provider["issuer"] = .string(server["issuer"])
        let agent = try spawn([.object(provider)])
        try requireFlow("deviceCode", agent)
        let login = try logInWithDevice(agent, provider: "dot-discovered")
        XCTAssertEqual(login["provider"], "dot-discovered")
        let access = try XCTUnwrap(try agent.result("token", ["provider": "dot-discovered"])["accessToken"]?.stringValue)
        XCTAssertEqual(try introspect(access)["active"], true, "the token endpoint was discovered")
        XCTAssertEqual(try agent.result("logout", ["provider": "dot-discovered"])["revoked"], true)
        XCTAssertEqual(try introspect(access)["active"], false)
    }

    func testAuthorizationCodeWithPKCE() throws {
        let agent = try spawn([codeProvider()])
        try requireFlow("authorizationCode", agent)
        let loginID = try agent.send("login", ["provider": "dot-code"])
        let prompt = try expectPrompt(agent, loginID)
        XCTAssertEqual(prompt["provider"], "dot-code")
        XCTAssertNotNil(prompt["requestId"], "\(prompt)")
        XCTAssertNotNil(prompt["expiresAt"]?.stringValue, "\(prompt)")
        let url = try XCTUnwrap(prompt["url"]?.stringValue, "\(prompt)")
        let query = URLComponents(string: url)?.queryItems ?? []
        XCTAssertEqual(query.first { $0.name == "code_challenge_method" }?.value, "S256", url)
        XCTAssertEqual(query.first { $0.name == "client_id" }?.value, server.client("authorizationCode").id, url)

        var user = InteropUser(browser: Browser(timeout: 10), username: server["username"], password: server["password"])
        let last = try user.complete(startingAt: url)
        XCTAssertEqual(user.steps, ["login", "consent"])
        XCTAssertEqual(last.url.host, "127.0.0.1", "the browser ends at the agent's loopback listener: \(user.browser.trail)")
        XCTAssertTrue(user.browser.trail.contains { $0.hasPrefix("GET http://127.0.0.1:") && $0.contains("/callback?code=") },
                      "DOT redirected to the agent's callback with a code: \(user.browser.trail)")

        let answer = try agent.answer(to: loginID, timeout: 20)
        let login = try XCTUnwrap(answer["result"], "\(answer)")
        XCTAssertEqual(login["provider"], "dot-code")
        XCTAssertNotNil(login["user"]?.objectValue)
        XCTAssertNotNil(login["expiresAt"]?.stringValue)
        let access = try XCTUnwrap(try agent.result("token", ["provider": "dot-code"])["accessToken"]?.stringValue)
        XCTAssertEqual(try userinfo(access).status, 200)
        XCTAssertEqual(try agent.result("refresh", ["provider": "dot-code"])["refreshed"], true)
    }

    func testDeviceCode() throws {
        let agent = try spawn([deviceProvider(id: "dot-device", origin: "https://device.interop.test").json])
        try requireFlow("deviceCode", agent)
        let login = try logInWithDevice(agent, provider: "dot-device")
        XCTAssertEqual(login["provider"], "dot-device")
        XCTAssertNotNil(login["user"]?.objectValue)
        let access = try XCTUnwrap(try agent.result("token", ["provider": "dot-device"])["accessToken"]?.stringValue)
        XCTAssertEqual(try introspect(access)["active"], true)
        XCTAssertEqual(try userinfo(access).status, 200)
    }

    // MARK: The server and the test's browser, without the agent

    /// Checks the fixture the browser-flow tests rely on: DOT accepts a loopback redirect
    /// on any port (RFC 8252 §7.3) with PKCE, and `InteropUser` gets through its pages.
    func testServerCodeFlowWithoutTheAgent() throws {
        let redirect = "http://127.0.0.1:\(Int.random(in: 20_000...60_000))/callback"
        let url = server["authorizationEndpoint"] + "?" + Browser.formEncode([
            ("response_type", "code"), ("client_id", server.client("authorizationCode").id), ("redirect_uri", redirect),
            ("state", "s-1"), ("scope", "openid read"),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), ("code_challenge_method", "S256"),
        ])
        var user = InteropUser(browser: Browser(timeout: 10), username: server["username"], password: server["password"])
        let last = try user.complete(startingAt: url, stopAt: { $0.path == "/callback" })
        XCTAssertEqual(user.steps, ["login", "consent"])
        let location = try XCTUnwrap(last.location, "\(user.browser.trail)")
        XCTAssertTrue(location.hasPrefix(redirect + "?"), location)
        let query = URLComponents(string: location)?.queryItems ?? []
        XCTAssertEqual(query.first { $0.name == "state" }?.value, "s-1")
        let code = try XCTUnwrap(query.first { $0.name == "code" }?.value)

        let tokens = try Browser(timeout: 10).fetch("POST", URL(string: server["tokenEndpoint"])!, form: [
            ("grant_type", "authorization_code"), ("client_id", server.client("authorizationCode").id), ("code", code),
            ("redirect_uri", redirect), ("code_verifier", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
        ])
        XCTAssertEqual(tokens.status, 200, tokens.body)
        let json = try JSONParser.parse(Array(tokens.body.utf8))
        XCTAssertNotNil(json["refresh_token"]?.stringValue)
        let idToken = try XCTUnwrap(json["id_token"]?.stringValue, tokens.body)
        XCTAssertTrue(idToken.hasPrefix("eyJ"), "an RS256 JWT")
    }

    /// The device flow fixture: the verification page, typing the code, accepting, and polling.
    func testServerDeviceFlowWithoutTheAgent() throws {
        let client = server.client("deviceCode").id
        let browser = Browser(timeout: 10)
        let started = try browser.fetch("POST", URL(string: server["deviceAuthorizationEndpoint"])!,
                                        form: [("client_id", client), ("scope", "openid read")])
        XCTAssertEqual(started.status, 200, started.body)
        let device = try JSONParser.parse(Array(started.body.utf8))
        let deviceCode = try XCTUnwrap(device["device_code"]?.stringValue)
        let poll = { try browser.fetch("POST", URL(string: self.server["tokenEndpoint"])!, form: [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", client), ("device_code", deviceCode),
        ]) }
        XCTAssertTrue(try poll().body.contains("authorization_pending"))
        XCTAssertEqual(device["interval"], 1)

        var user = InteropUser(browser: Browser(timeout: 10), username: server["username"], password: server["password"])
        _ = try user.complete(startingAt: try XCTUnwrap(device["verification_uri"]?.stringValue),
                              userCode: try XCTUnwrap(device["user_code"]?.stringValue))
        XCTAssertEqual(user.steps, ["login", "user code", "accept device"])
        let granted = try poll()
        XCTAssertEqual(granted.status, 200, granted.body)
        XCTAssertTrue(granted.body.contains("refresh_token"), granted.body)
    }

    /// What issue 15's agent relies on, checked on DOT alone: two people log in with one
    /// client at once, and the refresh_token grant takes a narrower `scope` (RFC 6749 §6).
    /// DOT also narrows the *rotated refresh token* to that scope (RFC 6749 §6 says it must keep
    /// the original), so a later refresh for the original scope is `invalid_scope` — an agent
    /// sharing one refresh token between shapes must expect that from DOT.
    func testServerTwoUsersAndNarrowingScopeOnRefreshWithoutTheAgent() throws {
        let users = server.users
        XCTAssertEqual(users.map(\.username), ["alice", "bob"])
        guard users.count == 2 else { return }
        let client = server.client("password").id
        func grant(_ form: [(String, String)]) throws -> (status: Int, json: JSONValue) {
            let response = try Browser(timeout: 10).fetch("POST", URL(string: server["tokenEndpoint"])!, form: [("client_id", client)] + form)
            return (response.status, try JSONParser.parse(Array(response.body.utf8)))
        }
        var refreshTokens: [String] = []
        for user in users {
            let login = try grant([("grant_type", "password"), ("username", user.username), ("password", user.password), ("scope", "openid read write")])
            XCTAssertEqual(login.status, 200, "\(login.json)")
            let access = try XCTUnwrap(login.json["access_token"]?.stringValue)
            XCTAssertEqual(try introspect(access)["username"]?.stringValue, user.username)
            refreshTokens.append(try XCTUnwrap(login.json["refresh_token"]?.stringValue))
        }

        let narrowed = try grant([("grant_type", "refresh_token"), ("refresh_token", refreshTokens[1]), ("scope", "read")])
        XCTAssertEqual(narrowed.status, 200, "\(narrowed.json)")
        XCTAssertEqual(narrowed.json["scope"], "read")
        let introspection = try introspect(try XCTUnwrap(narrowed.json["access_token"]?.stringValue))
        XCTAssertEqual(introspection["scope"], "read")
        XCTAssertEqual(introspection["username"]?.stringValue, "bob")

        let wider = try grant([("grant_type", "refresh_token"), ("refresh_token", refreshTokens[0]), ("scope", "read email")])
        XCTAssertEqual(wider.status, 400)
        XCTAssertEqual(wider.json, ["error": "invalid_scope"], "DOT gives no error_description")
        let rotated = try XCTUnwrap(narrowed.json["refresh_token"]?.stringValue)
        let original = try grant([("grant_type", "refresh_token"), ("refresh_token", rotated), ("scope", "openid read write")])
        XCTAssertEqual(original.json, ["error": "invalid_scope"], "DOT narrowed the rotated refresh token too")
        let unscoped = try grant([("grant_type", "refresh_token"), ("refresh_token", rotated)])
        XCTAssertEqual(unscoped.json["scope"], "read", "a refused scope does not spend the refresh token; it stays narrowed")
    }

    // MARK: Steps

    private func logInWithPassword(_ agent: AgentConversation) throws {
        _ = try agent.result("login", ["provider": "dot-password",
                                       "credentials": ["username": .string(server["username"]), "password": .string(server["password"])]])
    }

    /// Logs in to `dot-password` as the server's user number `index` (0: alice, 1: bob); returns the login result.
    @discardableResult
    private func logInWithPassword(_ agent: AgentConversation, as index: Int) throws -> JSONValue {
        let user = server.users[index]
        return try agent.result("login", ["provider": "dot-password",
                                          "credentials": ["username": .string(user.username), "password": .string(user.password)]])
    }

    /// Starts a device login, approves the user code on DOT's pages (typing the
    /// code on the plain verification URI, as a person would) and returns the login result.
    private func logInWithDevice(_ agent: AgentConversation, provider: String) throws -> JSONValue {
        let loginID = try agent.send("login", ["provider": .string(provider)])
        let prompt = try expectPrompt(agent, loginID)
        XCTAssertEqual(prompt["provider"]?.stringValue, provider)
        XCTAssertNotNil(prompt["requestId"], "\(prompt)")
        XCTAssertNotNil(prompt["expiresAt"]?.stringValue, "\(prompt)")
        let userCode = try XCTUnwrap(prompt["userCode"]?.stringValue, "\(prompt)")
        let verification = try XCTUnwrap(prompt["verificationUri"]?.stringValue, "\(prompt)")
        XCTAssertEqual(verification, server["baseUrl"] + "/o/device/")
        if let complete = prompt["verificationUriComplete"]?.stringValue {
            XCTAssertTrue(complete.contains(userCode), complete)
        }

        var user = InteropUser(browser: Browser(timeout: 10), username: server["username"], password: server["password"])
        let last = try user.complete(startingAt: verification, userCode: userCode)
        XCTAssertEqual(user.steps, ["login", "user code", "accept device"])
        XCTAssertTrue(last.url.path.contains("device-grant-status"), "\(user.browser.trail)")

        let answer = try agent.answer(to: loginID, timeout: 30)
        return try XCTUnwrap(answer["result"], "\(answer)")
    }

    /// The loginPrompt a pending login sends; an answer arriving first is a failure.
    private func expectPrompt(_ agent: AgentConversation, _ loginID: JSONValue) throws -> JSONValue {
        let message = try agent.notificationOrAnswer("loginPrompt", to: loginID, timeout: 15)
        guard message["method"] != nil else {
            throw AgentConversation.Failure(description: "login was answered before any loginPrompt: \(message)")
        }
        return message["params"] ?? .null
    }

    /// The agent must advertise the flow in `initialize`'s `capabilities.flows`.
    private func requireFlow(_ flow: String, _ agent: AgentConversation) throws {
        let initialize = try agent.result("initialize", ["protocolVersion": "1", "clientInfo": ["name": "interop-tests", "version": "1"]])
        let flows = initialize["capabilities"]?["flows"]?.arrayValue?.compactMap(\.stringValue) ?? []
        XCTAssertTrue(flows.contains(flow), "capabilities.flows lacks \(flow): \(flows)")
    }

    // MARK: Checking tokens at the server

    /// RFC 7662 introspection, authenticated as the confidential service client.
    private func introspect(_ token: String) throws -> JSONValue {
        let client = server.client("clientCredentials")
        let credentials = Data("\(Browser.percentEncode(client.id)):\(Browser.percentEncode(client.secret ?? ""))".utf8).base64EncodedString()
        let response = try Browser(timeout: 10).fetch("POST", URL(string: server["introspectionEndpoint"])!, form: [("token", token)],
                                                      headers: [("Authorization", "Basic " + credentials)])
        XCTAssertEqual(response.status, 200, response.body)
        return try JSONParser.parse(Array(response.body.utf8))
    }

    private func userinfo(_ token: String) throws -> Browser.Response {
        try Browser(timeout: 10).fetch("GET", URL(string: server["userinfoEndpoint"])!, form: nil,
                                       headers: [("Authorization", "Bearer " + token)])
    }

    // MARK: Agent and configuration

    private func spawn(_ providers: [JSONValue]) throws -> AgentConversation {
        let config: JSONValue = [
            // DOT's tokens live 60 s: a 60 s window would refresh on every call.
            "refreshWindowSeconds": 10,
            "store": ["kind": "file", "path": .string(directory.appendingPathComponent("store").path)],
            "providers": .array(providers),
        ]
        // A file of its own, written whole: an agent still reading the previous
        // test's config must never see this one half-written.
        let path = directory.appendingPathComponent("config-\(UUID().uuidString).json")
        try Data(JSONSerializer.bytes(config)).write(to: path, options: .atomic)
        return try AgentConversation(arguments: ["--config", path.path], environment: ["XDG_STATE_HOME": directory.path])
    }

    private func passwordProvider() -> JSONValue {
        ["id": "dot-password", "displayName": "DOT (password)", "flow": "password", "origins": ["https://password.interop.test"],
         "tokenEndpoint": .string(server["tokenEndpoint"]), "revocationEndpoint": .string(server["revocationEndpoint"]),
         "userinfoEndpoint": .string(server["userinfoEndpoint"]), "clientId": .string(server.client("password").id),
         "scopes": ["openid", "read"]]
    }

    private func serviceProvider() -> JSONValue {
        let client = server.client("clientCredentials")
        return ["id": "dot-service", "displayName": "DOT (service)", "flow": "clientCredentials", "origins": ["https://service.interop.test"],
                "tokenEndpoint": .string(server["tokenEndpoint"]), "revocationEndpoint": .string(server["revocationEndpoint"]),
                "clientId": .string(client.id), "clientSecret": .string(client.secret ?? ""), "scopes": ["read"]]
    }

    private func codeProvider() -> JSONValue {
        ["id": "dot-code", "displayName": "DOT (browser)", "flow": "authorizationCode", "origins": ["https://code.interop.test"],
         "authorizationEndpoint": .string(server["authorizationEndpoint"]), "tokenEndpoint": .string(server["tokenEndpoint"]),
         "revocationEndpoint": .string(server["revocationEndpoint"]), "userinfoEndpoint": .string(server["userinfoEndpoint"]),
         "clientId": .string(server.client("authorizationCode").id), "scopes": ["openid", "read"], "openBrowser": false]
    }

    private func deviceProvider(id: String, origin: String) -> JSONObject {
        ["id": .string(id), "displayName": "DOT (device)", "flow": "deviceCode", "origins": [.string(origin)],
         "deviceAuthorizationEndpoint": .string(server["deviceAuthorizationEndpoint"]), "tokenEndpoint": .string(server["tokenEndpoint"]),
         "revocationEndpoint": .string(server["revocationEndpoint"]), "userinfoEndpoint": .string(server["userinfoEndpoint"]),
         "clientId": .string(server.client("deviceCode").id), "scopes": ["openid", "read"], "openBrowser": false]
    }

    /// The class's one server (`shared`): DOT with short intervals and lifetimes, so waits stay short.
    static func startServer() throws -> InteropServer {
        try InteropServer.start(environment: [
            "INTEROP_DEVICE_INTERVAL": "1",
            "INTEROP_ACCESS_TOKEN_LIFETIME": "60",
            "INTEROP_REFRESH_GRACE_SECONDS": "0",
            "INTEROP_PARENT_PID": String(getpid()),
        ])
    }
}

private extension JSONObject {
    var json: JSONValue { .object(self) }
}
