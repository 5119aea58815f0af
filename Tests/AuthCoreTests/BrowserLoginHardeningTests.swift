@testable import AuthCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import Wire
import TestSupport
import XCTest

/// What other local processes and hostile servers can do to a browser login:
/// stall or forge its callback, hand the opener a dangerous URL, replay an ID token.
final class BrowserLoginHardeningTests: XCTestCase {
    // MARK: The login as a whole, against a stalled callback connection

    /// A token endpoint that issues an ID token carrying `nonce`; nothing else answers.
    private static func tokenEndpoint(nonce: String = "unused") -> FakeOAuthServer {
        let idToken = "eyJhbGciOiJub25lIn0." + Base64URL.encode(JSONSerializer.bytes(["sub": "alice", "nonce": .string(nonce)])) + ".sig"
        let server = FakeOAuthServer()
        server.answer("/token", FakeOAuthServer.json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 60, "id_token": .string(idToken)]))
        return server
    }

    private func provider(callbackTimeout: TimeInterval, scopes: [String] = [], transport: HTTPTransport = BrowserLoginHardeningTests.tokenEndpoint()) -> AuthorizationCodeProvider {
        var config = ProviderConfig(id: "web", displayName: "Web", flow: .authorizationCode)
        config.authorizationEndpoint = "https://id.example.com/authorize"
        config.tokenEndpoint = "https://id.example.com/token"
        config.clientId = "cli"
        config.scopes = scopes
        let http = HTTPCalls(transport: transport, timeout: 5)
        let oauth = OAuthClient(config: config, http: http, clock: SystemClock(), discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        return AuthorizationCodeProvider(config: config, oauth: oauth, clock: SystemClock(), revokeTimeout: 1,
                                         browser: BrowserLauncher(), callbackTimeout: callbackTimeout)
    }

    /// Starts a login and returns it with the port its callback listens on and the authorization request's parameters.
    private func startLogin(_ provider: AuthorizationCodeProvider) async throws -> (Task<AuthError?, Never>, UInt16, [String: String]) {
        let prompted = TestBox<String?>(nil)
        let login = Task { () -> AuthError? in
            do throws(AuthError) {
                _ = try await provider.login(nil, context: LoginContext(prompt: { prompt, _ in
                    if case .browser(let url, _) = prompt { prompted.set(url) }
                }))
                return nil
            } catch {
                return error
            }
        }
        for _ in 0..<200 where prompted.get() == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        let url = try XCTUnwrap(prompted.get().flatMap(URLComponents.init(string:)), "no loginPrompt")
        let redirect = try XCTUnwrap(url.queryItems?.first { $0.name == "redirect_uri" }?.value.flatMap(URLComponents.init(string:)))
        let parameters = Dictionary((url.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
        return (login, UInt16(try XCTUnwrap(redirect.port)), parameters)
    }

    /// Waits (bounded) for the login to end; a login that never ends fails the test instead of hanging it.
    private func outcome(of login: Task<AuthError?, Never>, within seconds: TimeInterval) async -> AuthError?? {
        let ended = expectation(description: "the login ends")
        let result = TestBox<AuthError??>(nil)
        Task {
            let error = await login.value
            result.set(.some(error))
            ended.fulfill()
        }
        await fulfillment(of: [ended], timeout: seconds)
        return result.get()
    }

    func testLoginTimesOutWhileACallbackConnectionStalls() async throws {
        let (login, port, _) = try await startLogin(provider(callbackTimeout: 1))
        let stall = try SlowClient(port: port)
        defer { stall.stop() }
        let error = await outcome(of: login, within: 8)
        XCTAssertEqual(error??.code, .loginTimedOut, "the deadline holds whatever the connection does")
    }

    func testCancellingEndsTheLoginWhileACallbackConnectionStalls() async throws {
        let (login, port, _) = try await startLogin(provider(callbackTimeout: 300))
        let stall = try SlowClient(port: port)
        defer { stall.stop() }
        try await Task.sleep(nanoseconds: 300_000_000)
        login.cancel()
        let error = await outcome(of: login, within: 5)
        XCTAssertEqual(error??.code, .loginDenied, "cancelled, not left running")
    }

    /// OIDC Core §3.1.3.7: an ID token that carries another login's nonce ends the login with 1008.
    func testIDTokenWithAnotherNonceIsRefused() async throws {
        let (login, port, request) = try await startLogin(provider(callbackTimeout: 30, scopes: ["openid"],
                                                                   transport: Self.tokenEndpoint(nonce: "replayed")))
        XCTAssertNotNil(request["nonce"], "openid asks for a nonce")
        let state = try XCTUnwrap(request["state"])
        let (_, page) = try await fetchPage(port, "/callback?code=c&state=\(state)")
        XCTAssertTrue(page.contains("does not belong to this login"), page)
        let error = await outcome(of: login, within: 5)
        XCTAssertEqual(error??.code, .loginDenied)
        XCTAssertEqual(error??.message, "The Web login was refused: its ID token carries another login's nonce.")
    }

    // MARK: RFC 9207 iss, for a configured provider

    /// An issuer `https://id.example.com` whose discovery document says (`promised`) or does not say that
    /// its authorization responses carry `iss`; its token endpoint would issue a token.
    private static func configuredIssuer(promisesIss: Bool) -> FakeOAuthServer {
        let server = tokenEndpoint()
        server.answer("/.well-known/openid-configuration", FakeOAuthServer.json(200, [
            "issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
            "token_endpoint": "https://id.example.com/token", "authorization_response_iss_parameter_supported": .bool(promisesIss)]))
        return server
    }

    private func issuerProvider(_ server: FakeOAuthServer) -> AuthorizationCodeProvider {
        var config = ProviderConfig(id: "web", displayName: "Web", flow: .authorizationCode)
        config.issuer = "https://id.example.com"
        config.clientId = "cli"
        let http = HTTPCalls(transport: server, timeout: 5)
        let oauth = OAuthClient(config: config, http: http, clock: SystemClock(), discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        return AuthorizationCodeProvider(config: config, oauth: oauth, clock: SystemClock(), revokeTimeout: 1,
                                         browser: BrowserLauncher(), callbackTimeout: 30)
    }

    /// The login's outcome after its browser came back with `iss` (none when nil) and a code; the server, to count its token requests.
    private func loginComingBack(with iss: String?, promisesIss: Bool) async throws -> (AuthError??, FakeOAuthServer) {
        let server = Self.configuredIssuer(promisesIss: promisesIss)
        let (login, port, request) = try await startLogin(issuerProvider(server))
        let state = try XCTUnwrap(request["state"])
        let issParameter = iss.map { "&iss=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0) } ?? ""
        let (_, page) = try await fetchPage(port, "/callback?code=c&state=\(state)\(issParameter)")
        let error = await outcome(of: login, within: 5)
        XCTAssertEqual(page.contains("did not come from the expected server"), error??.code != nil, "the tab says why")
        return (error, server)
    }

    func testAnotherIssuersIssIsRefusedForAConfiguredProvider() async throws {
        for promised in [true, false] {
            let (error, server) = try await loginComingBack(with: "https://attacker.example", promisesIss: promised)
            XCTAssertEqual(error??.code, .loginDenied, "promised: \(promised)")
            XCTAssertEqual(error??.message, "The Web login was refused: the authorization response names the issuer "
                           + "https://attacker.example, not https://id.example.com (RFC 9207).")
            XCTAssertEqual(server.count("/token"), 0, "the code is not exchanged")
        }
    }

    func testAMissingIssIsRefusedWhenTheServerPromisedIt() async throws {
        let (error, server) = try await loginComingBack(with: nil, promisesIss: true)
        XCTAssertEqual(error??.code, .loginDenied)
        XCTAssertEqual(error??.message, "The Web login was refused: the authorization response carries no iss although "
                       + "https://id.example.com says it sends one (RFC 9207).")
        XCTAssertEqual(server.count("/token"), 0, "the code is not exchanged")
    }

    func testTheRightIssOrNoneUnpromisedLogsIn() async throws {
        for (iss, promised) in [("https://id.example.com", true), (nil, false)] as [(String?, Bool)] {
            let (error, server) = try await loginComingBack(with: iss, promisesIss: promised)
            XCTAssertEqual(error, .some(nil), "iss \(iss ?? "none"), promised: \(promised)")
            XCTAssertEqual(server.count("/token"), 1)
        }
    }

    // MARK: The listener

    func testSlowConnectionsDoNotHoldUpTheCallback() async throws {
        let listener = try LoopbackRedirectListener(port: 0, path: "/callback", state: "right")
        defer { listener.shutDown() }
        let port = listener.port
        let stalls = try (0..<3).map { _ in try SlowClient(port: port) }
        defer { stalls.forEach { $0.stop() } }
        try await Task.sleep(nanoseconds: 200_000_000)
        let browser = Task { try await fetchPage(port, "/callback?code=c&state=right") }
        let callback = try await listener.callback(until: Deadline(Date().addingTimeInterval(5)), on: SystemClock())
        XCTAssertEqual(callback.query["code"], "c")
        callback.respond(true, "done")
        let (status, page) = try await browser.value
        XCTAssertEqual(status, 200)
        XCTAssertTrue(page.contains("done"), page)
    }

    func testCallbackWithoutTheRightStateIsAnsweredAndIgnored() async throws {
        let listener = try LoopbackRedirectListener(port: 0, path: "/callback", state: "right")
        defer { listener.shutDown() }
        let port = listener.port
        let browser = Task { () -> [(Int, String)] in
            var pages: [(Int, String)] = []
            for query in ["?code=forged&state=wrong", "?code=forged", "?code=c&state=right"] {
                pages.append(try await fetchPage(port, "/callback" + query))
            }
            return pages
        }
        let callback = try await listener.callback(until: Deadline(Date().addingTimeInterval(10)), on: SystemClock())
        XCTAssertEqual(callback.query, ["code": "c", "state": "right"], "only the right state ends the wait")
        callback.respond(true, "done")
        let pages = try await browser.value
        for (status, page) in pages.prefix(2) {
            XCTAssertEqual(status, 400)
            XCTAssertTrue(page.contains("not the one the application is waiting for"), page)
        }
        XCTAssertEqual(pages[2].0, 200)
    }

    func testRequestHeadsAreBounded() {
        XCTAssertNil(LoopbackRedirectListener.headEnd(Array("GET / HTTP/1.1\r\nHost: x\r\n".utf8)))
        XCTAssertEqual(LoopbackRedirectListener.headEnd(Array("GET / HTTP/1.1\r\n\r\n".utf8)), 18)
        XCTAssertNil(LoopbackRedirectListener.parseRequest(Array("POST /callback HTTP/1.1\r\n\r\n".utf8)))
        XCTAssertEqual(LoopbackRedirectListener.parseRequest(Array("GET /callback?a=b%20c HTTP/1.1\r\n\r\n".utf8))?.1, ["a": "b c"])
    }

    // MARK: URLs for the browser

    func testOnlyHTTPSOrLoopbackURLsAreOpened() {
        let refused = [
            "file:///etc/passwd", "javascript:alert(1)", "-a Calculator", "--help", "-https://id.example.com",
            "http://id.example.com/device", "https://user:pw@id.example.com/device", " https://id.example.com/device",
            "https://id.example.com/device\n-x", "data:text/html,hi", "ftp://id.example.com", "",
        ]
        for url in refused {
            XCTAssertNil(BrowserURL(url), url)
            XCTAssertNotNil(BrowserURL.problem(url), url)
        }
        for url in ["https://id.example.com/device?user_code=AB-CD", "HTTPS://ID.example.com", "http://127.0.0.1:8080/device",
                    "http://localhost/x", "http://[::1]:5/device"] {
            XCTAssertEqual(BrowserURL(url)?.text, url)
        }
        var config = ProviderConfig(id: "dev", displayName: "Dev", flow: .deviceCode)
        config.clientId = "cli"
        XCTAssertThrowsError(try BrowserURL.checked("file:///etc/passwd", what: "verification URI", provider: config)) { error in
            XCTAssertEqual((error as? AuthError)?.code, .loginDenied)
            XCTAssertEqual((error as? AuthError)?.message,
                           "The Dev login was refused: the verification URI cannot be opened safely (it is not an https URL).")
        }
    }

    // MARK: OpenID Connect nonce

    private func idToken(_ claims: JSONValue) -> String {
        "eyJhbGciOiJub25lIn0." + Base64URL.encode(JSONSerializer.bytes(claims)) + ".sig"
    }

    func testNonceIsSentOnlyForOpenIDAndItsEchoIsChecked() {
        XCTAssertTrue(AuthorizationCodeProvider.wantsNonce(["openid", "email"]))
        XCTAssertFalse(AuthorizationCodeProvider.wantsNonce(["email", "openidx"]))
        let url = AuthorizationCodeProvider.authorizationURL(endpoint: "https://id.example.com/authorize", clientId: "cli",
                                                             redirectURI: "http://127.0.0.1:5/callback", scopes: ["openid"],
                                                             pkce: PKCE(), nonce: "n-1")
        XCTAssertTrue(url.hasSuffix("&code_challenge_method=S256&nonce=n-1"), url)

        XCTAssertNil(AuthorizationCodeProvider.nonceProblem(idToken: idToken(["sub": "a", "nonce": "n-1"]), expected: "n-1"))
        XCTAssertNil(AuthorizationCodeProvider.nonceProblem(idToken: nil, expected: "n-1"), "no ID token, nothing to check")
        XCTAssertNil(AuthorizationCodeProvider.nonceProblem(idToken: idToken(["sub": "a"]), expected: nil), "no nonce sent")
        XCTAssertNotNil(AuthorizationCodeProvider.nonceProblem(idToken: idToken(["sub": "a", "nonce": "n-2"]), expected: "n-1"))
        XCTAssertNotNil(AuthorizationCodeProvider.nonceProblem(idToken: idToken(["sub": "a"]), expected: "n-1"))
        XCTAssertNotNil(AuthorizationCodeProvider.nonceProblem(idToken: idToken(["sub": "a", "nonce": 1]), expected: "1"))
        XCTAssertNotNil(AuthorizationCodeProvider.nonceProblem(idToken: "not-a-jwt", expected: "n-1"))
    }
}

/// GETs a page from the loopback listener, as a browser would.
private func fetchPage(_ port: UInt16, _ pathAndQuery: String) async throws -> (Int, String) {
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(pathAndQuery)")!)
    request.timeoutInterval = 5
    let (data, response) = try await URLSession.shared.data(for: request)
    return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}
