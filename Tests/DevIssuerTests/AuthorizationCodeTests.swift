import DevIssuer
import Foundation
import JSON
import XCTest

/// The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636) and
/// loopback redirects (RFC 8252): the login form, redirects, auto-approve and the code exchange.
final class AuthorizationCodeTests: IssuerTestCase {
    /// RFC 7636 Appendix B.
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    static let redirectURI = "http://127.0.0.1:49152/callback"

    func authorizeQuery(_ overrides: [String: String?] = [:]) -> String {
        var parameters: [String: String?] = [
            "response_type": "code", "client_id": "cli", "redirect_uri": Self.redirectURI, "state": "xyz 1/2",
            "code_challenge": Self.challenge, "code_challenge_method": "S256", "scope": "openid profile",
        ]
        for (key, value) in overrides { parameters[key] = value }
        return parameters.compactMap { key, value in value.map { (key, $0) } }.sorted { $0.0 < $1.0 }
            .map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    }

    /// Approves through the form and returns the redirect's query items.
    func approve(_ overrides: [String: String?] = [:], username: String = "alice", password: String = "wonderland",
                 file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let fields = formFields(authorizeQuery(overrides)) + [("username", username), ("password", password), ("action", "approve")]
        let response = try postForm("/authorize", fields)
        XCTAssertEqual(response.status, 302, response.text, file: file, line: line)
        return try redirectQuery(response, file: file, line: line)
    }

    func formFields(_ query: String) -> [(String, String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }
    }

    func redirectQuery(_ response: TestResponse, expectedPrefix: String = redirectURI + "?",
                       file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let location = try XCTUnwrap(response.header("Location"), file: file, line: line)
        XCTAssertTrue(location.hasPrefix(expectedPrefix), location, file: file, line: line)
        let items = URLComponents(string: location)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    func exchange(_ code: String, verifier: String? = verifier, redirectURI: String? = redirectURI, client: String = "cli") throws -> TestResponse {
        var fields = [("grant_type", "authorization_code"), ("client_id", client), ("code", code)]
        if let redirectURI { fields.append(("redirect_uri", redirectURI)) }
        if let verifier { fields.append(("code_verifier", verifier)) }
        return try token(fields)
    }

    func testFormThenRedirectWithCodeAndStateThenTokens() throws {
        let page = try get("/authorize?" + authorizeQuery())
        XCTAssertEqual(page.status, 200, page.text)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertTrue(page.text.contains("<form method=\"post\" action=\"/authorize\">"), page.text)
        XCTAssertTrue(page.text.contains("name=\"code_challenge\" value=\"\(Self.challenge)\""), page.text)
        XCTAssertTrue(page.text.contains("name=\"state\" value=\"xyz 1/2\""), page.text)

        let redirect = try approve()
        XCTAssertEqual(redirect["state"], "xyz 1/2")
        let code = try XCTUnwrap(redirect["code"])
        let tokens = try exchange(code)
        XCTAssertEqual(tokens.status, 200, tokens.text)
        XCTAssertEqual(tokens.header("Cache-Control"), "no-store")
        XCTAssertNotNil(tokens.json?["refresh_token"]?.stringValue)
        XCTAssertEqual(tokens.json?["scope"], "openid profile")
        XCTAssertEqual(jwtClaims(try XCTUnwrap(tokens.json?["id_token"]?.stringValue))?["sub"], "alice")
        let refresh = try XCTUnwrap(tokens.json?["refresh_token"]?.stringValue)
        XCTAssertEqual(try refreshGrant(refresh).status, 200, "the refresh token rotates like any other")
        XCTAssertEqual(issuer.count("authorize"), 2)
        XCTAssertEqual(issuer.count("token.authorization_code"), 1)
    }

    func testDenyRedirectsWithAccessDenied() throws {
        let fields = formFields(authorizeQuery()) + [("action", "deny")]
        let response = try postForm("/authorize", fields)
        XCTAssertEqual(response.status, 302)
        let query = try redirectQuery(response)
        XCTAssertEqual(query["error"], "access_denied")
        XCTAssertEqual(query["state"], "xyz 1/2")
        XCTAssertNil(query["code"])
    }

    func testBadCredentialsShowTheFormAgain() throws {
        let fields = formFields(authorizeQuery()) + [("username", "alice"), ("password", "nope"), ("action", "approve")]
        let response = try postForm("/authorize", fields)
        XCTAssertEqual(response.status, 200)
        XCTAssertNil(response.header("Location"))
        XCTAssertTrue(response.text.contains("Invalid username or password"), response.text)
        XCTAssertTrue(response.text.contains("name=\"redirect_uri\""))
    }

    func testAutoApproveRedirectsAtOnce() throws {
        issuer.setAutoApprove(username: "bob")
        let response = try get("/authorize?" + authorizeQuery())
        XCTAssertEqual(response.status, 302, response.text)
        let query = try redirectQuery(response)
        XCTAssertEqual(query["state"], "xyz 1/2")
        let tokens = try exchange(try XCTUnwrap(query["code"]))
        XCTAssertEqual(tokens.status, 200, tokens.text)
        let access = try XCTUnwrap(tokens.json?["access_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access).json?["sub"], "bob")

        issuer.setAutoApprove(username: nil)
        XCTAssertEqual(try get("/authorize?" + authorizeQuery()).status, 200, "off again: the form")
        issuer.setAutoApprove(username: "nobody")
        XCTAssertEqual(try redirectQuery(try get("/authorize?" + authorizeQuery()))["error"], "access_denied")
    }

    /// RFC 8707 at the code exchange: the access token is bound to the resource; an unknown
    /// one is refused before the code is looked at, so the code stays usable.
    func testResourceAtTheCodeExchange() throws {
        let code = try XCTUnwrap(try approve(username: "bob", password: "builder")["code"])
        let unknown = try token([("grant_type", "authorization_code"), ("client_id", "cli"), ("code", code), ("redirect_uri", Self.redirectURI),
                                 ("code_verifier", Self.verifier), ("resource", "https://unknown.example.com")])
        XCTAssertEqual(unknown.json?["error"], "invalid_target", unknown.text)
        let tokens = try token([("grant_type", "authorization_code"), ("client_id", "cli"), ("code", code), ("redirect_uri", Self.redirectURI),
                                ("code_verifier", Self.verifier), ("resource", "https://api.example.com")])
        XCTAssertEqual(tokens.status, 200, tokens.text)
        let access = try XCTUnwrap(tokens.json?["access_token"]?.stringValue)
        XCTAssertEqual(try get("/api/token", bearer: access).json,
                       ["sub": "bob", "client_id": "cli", "aud": "https://api.example.com", "scope": "openid profile",
                        "resource": "https://api.example.com"])
        XCTAssertEqual(jwtClaims(try XCTUnwrap(tokens.json?["id_token"]?.stringValue))?["aud"], "cli", "the ID token is for the client")
    }

    func testPKCEMismatchIsInvalidGrant() throws {
        let code = try XCTUnwrap(try approve()["code"])
        let wrong = try exchange(code, verifier: String(repeating: "a", count: 43))
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(wrong.json?["error"], "invalid_grant")
        XCTAssertEqual(try exchange(code, verifier: nil).json?["error"], "invalid_grant", "the verifier is required")
        XCTAssertEqual(try exchange(code, verifier: "short").json?["error"], "invalid_grant")
        XCTAssertEqual(try exchange(code).status, 200, "failed attempts do not burn the code")
    }

    func testReusedCodeIsRejectedAndRevokesItsTokens() throws {
        let code = try XCTUnwrap(try approve()["code"])
        let first = try exchange(code)
        XCTAssertEqual(first.status, 200)
        let access = try XCTUnwrap(first.json?["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(first.json?["refresh_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access).status, 200)

        let replay = try exchange(code)
        XCTAssertEqual(replay.status, 400)
        XCTAssertEqual(replay.json?["error"], "invalid_grant")
        XCTAssertEqual(try get("/userinfo", bearer: access).status, 401, "tokens from a replayed code are revoked")
        XCTAssertEqual(try refreshGrant(refresh).json?["error"], "invalid_grant")
    }

    func testRedirectURIMustMatchAtTheTokenEndpoint() throws {
        let code = try XCTUnwrap(try approve()["code"])
        XCTAssertEqual(try exchange(code, redirectURI: "http://127.0.0.1:49153/callback").json?["error"], "invalid_grant")
        XCTAssertEqual(try exchange(code, redirectURI: nil).json?["error"], "invalid_grant")
        XCTAssertEqual(try exchange(code, client: "demo").json?["error"], "invalid_grant", "issued to another client")
        XCTAssertEqual(try exchange(code).status, 200)
    }

    func testNonLoopbackOrUnknownClientNeverRedirects() throws {
        let refused: [[String: String?]] = [
            ["redirect_uri": "https://evil.example/callback"],
            ["redirect_uri": "http://localhost:49152/callback"],
            ["redirect_uri": "http://127.0.0.1.evil.example/callback"],
            ["redirect_uri": "http://user@127.0.0.1:1/callback"],
            ["redirect_uri": "http://127.0.0.1:49152/callback#frag"],
            ["redirect_uri": "http://127.0.0.1:99999/callback"],
            ["redirect_uri": nil],
            ["client_id": "nobody"],
            ["client_id": nil],
        ]
        for overrides in refused {
            let response = try get("/authorize?" + authorizeQuery(overrides))
            XCTAssertEqual(response.status, 400, "\(overrides): \(response.text)")
            XCTAssertNil(response.header("Location"), "\(overrides)")
            XCTAssertEqual(response.header("Content-Type"), "text/html; charset=utf-8")
            let posted = try postForm("/authorize", formFields(authorizeQuery(overrides)) + [("username", "alice"), ("password", "wonderland"), ("action", "approve")])
            XCTAssertEqual(posted.status, 400, "\(overrides)")
            XCTAssertNil(posted.header("Location"), "\(overrides)")
        }
        XCTAssertEqual(try get("/authorize?" + authorizeQuery(["redirect_uri": "http://[::1]:8080/cb"])).status, 200, "IPv6 loopback is fine")
        XCTAssertEqual(try get("/authorize?" + authorizeQuery(["redirect_uri": "http://127.0.0.1/cb"])).status, 200, "so is no port")
    }

    func testRequestErrorsRedirectOnceTheRedirectURIIsTrusted() throws {
        let cases: [([String: String?], String)] = [
            (["response_type": "token"], "unsupported_response_type"),
            (["response_type": nil], "invalid_request"),
            (["code_challenge": nil, "code_challenge_method": nil], "invalid_request"),
            (["code_challenge_method": "plain"], "invalid_request"),
            (["code_challenge_method": nil], "invalid_request"),
            (["code_challenge": "too-short"], "invalid_request"),
        ]
        for (overrides, error) in cases {
            let response = try get("/authorize?" + authorizeQuery(overrides))
            XCTAssertEqual(response.status, 302, "\(overrides)")
            let query = try redirectQuery(response)
            XCTAssertEqual(query["error"], error, "\(overrides)")
            XCTAssertEqual(query["state"], "xyz 1/2", "\(overrides)")
        }
    }

    func testConfidentialClientMayOmitPKCE() throws {
        let redirect = try approve(["client_id": "svc", "code_challenge": nil, "code_challenge_method": nil])
        let code = try XCTUnwrap(redirect["code"])
        let tokens = try token([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", Self.redirectURI)], basic: ("svc", "svc-secret"))
        XCTAssertEqual(tokens.status, 200, tokens.text)
        let withVerifier = try XCTUnwrap(try approve(["client_id": "svc", "code_challenge": nil, "code_challenge_method": nil])["code"])
        let mismatch = try token([("grant_type", "authorization_code"), ("code", withVerifier), ("redirect_uri", Self.redirectURI),
                                  ("code_verifier", Self.verifier)], basic: ("svc", "svc-secret"))
        XCTAssertEqual(mismatch.json?["error"], "invalid_grant", "a verifier without a challenge is refused")
    }

    func testRedirectKeepsAnExistingQueryAndEscapesState() throws {
        let uri = "http://127.0.0.1:5000/cb?app=1"
        let response = try postForm("/authorize", formFields(authorizeQuery(["redirect_uri": uri, "state": "a&b=c"])) +
                                    [("username", "alice"), ("password", "wonderland"), ("action", "approve")])
        let query = try redirectQuery(response, expectedPrefix: uri + "&code=")
        XCTAssertEqual(query["app"], "1")
        XCTAssertEqual(query["state"], "a&b=c")
    }

    /// OIDC Core §3.1.2.1: a nonce sent with the authorization request comes back in the ID token,
    /// through the login form and through auto-approve alike.
    func testNonceIsEchoedInTheIDToken() throws {
        let viaForm = try XCTUnwrap(try approve(["nonce": "n-0 1"])["code"])
        let formTokens = try exchange(viaForm)
        XCTAssertEqual(jwtClaims(try XCTUnwrap(formTokens.json?["id_token"]?.stringValue))?["nonce"], "n-0 1", formTokens.text)

        issuer.setAutoApprove(username: "alice")
        let auto = try XCTUnwrap(try redirectQuery(try get("/authorize?" + authorizeQuery(["nonce": "n-2"])))["code"])
        XCTAssertEqual(jwtClaims(try XCTUnwrap(try exchange(auto).json?["id_token"]?.stringValue))?["nonce"], "n-2")

        let without = try XCTUnwrap(try redirectQuery(try get("/authorize?" + authorizeQuery()))["code"])
        XCTAssertNil(jwtClaims(try XCTUnwrap(try exchange(without).json?["id_token"]?.stringValue))?["nonce"], "no nonce asked, none given")
    }

    /// With `requireNonce`, an `openid` request without a nonce is refused the way such
    /// OpenID providers refuse it; other scopes need none.
    func testRequireNonceRefusesOpenIDRequestsWithoutOne() throws {
        issuer.setRequireNonce(true)
        let refused = try redirectQuery(try get("/authorize?" + authorizeQuery()))
        XCTAssertEqual(refused["error"], "invalid_request")
        XCTAssertEqual(refused["error_description"], "nonce required")
        XCTAssertEqual(refused["state"], "xyz 1/2")
        XCTAssertEqual(try get("/authorize?" + authorizeQuery(["nonce": "n"])).status, 200, "with a nonce: the form")
        XCTAssertEqual(try get("/authorize?" + authorizeQuery(["scope": "profile"])).status, 200, "not OpenID: no nonce needed")

        let admin = try postJSON("/_admin/fault", ["requireNonce": false])
        XCTAssertEqual(admin.status, 200, admin.text)
        XCTAssertEqual(try get("/authorize?" + authorizeQuery()).status, 200, "off again")
        XCTAssertEqual(try postJSON("/_admin/fault", ["requireNonce": "yes"]).status, 400)
    }

    func testRequireNonceOption() throws {
        issuer.stop()
        issuer = DevIssuer(options: DevIssuerOptions(requireNonce: true))
        port = try issuer.start()
        XCTAssertEqual(try redirectQuery(try get("/authorize?" + authorizeQuery()))["error_description"], "nonce required")
        _ = try postJSON("/_admin/reset", [:])
        XCTAssertEqual(try redirectQuery(try get("/authorize?" + authorizeQuery()))["error_description"], "nonce required",
                       "a reset restores the configured requirement")
    }
}
