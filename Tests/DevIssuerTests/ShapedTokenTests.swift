import DevIssuer
import JSON
import XCTest

/// Tokens shaped per request (issue 15): RFC 8707 `resource`, `audience`, and a
/// narrower `scope` on refresh (RFC 6749 §6), each bound to the access token issued,
/// with rotation and reuse detection unchanged, and counted per user and shape.
final class ShapedTokenTests: IssuerTestCase {
    private func refresh(_ refreshToken: String, _ extra: [(String, String)]) throws -> TestResponse {
        try token([("grant_type", "refresh_token"), ("client_id", "cli"), ("refresh_token", refreshToken)] + extra)
    }

    private func access(_ response: TestResponse, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        return try XCTUnwrap(response.json?["access_token"]?.stringValue, response.text, file: file, line: line)
    }

    /// What the protected API says about a token.
    private func tokenInfo(_ access: String) throws -> JSONValue? {
        let response = try get("/api/token", bearer: access)
        XCTAssertEqual(response.status, 200, response.text)
        return response.json
    }

    func testRefreshWithResourceBindsTheAccessTokenAndRotates() throws {
        let login = try passwordGrant(scope: "openid profile")
        let response = try refresh(login.refresh, [("resource", "https://api.example.com")])
        let shaped = try access(response)
        XCTAssertEqual(jwtClaims(shaped)?["aud"], "https://api.example.com")
        XCTAssertEqual(jwtClaims(shaped)?["scope"], "openid profile")
        XCTAssertEqual(try tokenInfo(shaped), ["sub": "alice", "client_id": "cli", "aud": "https://api.example.com",
                                              "scope": "openid profile", "resource": "https://api.example.com"])
        XCTAssertEqual(try tokenInfo(login.access), ["sub": "alice", "client_id": "cli", "aud": "cli", "scope": "openid profile"],
                       "the login's token is not bound to a resource")

        let rotated = try XCTUnwrap(response.json?["refresh_token"]?.stringValue)
        XCTAssertNotEqual(rotated, login.refresh, "a shaped refresh rotates like any refresh")
        let other = try refresh(rotated, [("resource", "https://files.example.com")])
        XCTAssertEqual(try tokenInfo(try access(other))?["resource"], "https://files.example.com")
        let plain = try refresh(try XCTUnwrap(other.json?["refresh_token"]?.stringValue), [])
        XCTAssertEqual(try tokenInfo(try access(plain)), ["sub": "alice", "client_id": "cli", "aud": "cli", "scope": "openid profile"],
                       "the refresh token is not narrowed by the shapes asked for with it")
    }

    func testTheIssuersOwnAPIIsAKnownResource() throws {
        let login = try passwordGrant()
        let shaped = try access(try refresh(login.refresh, [("resource", issuer.baseURL + "/api")]))
        XCTAssertEqual(try tokenInfo(shaped)?["aud"]?.stringValue, issuer.baseURL + "/api")
    }

    func testAudienceOnRefreshAndBothTogether() throws {
        let login = try passwordGrant()
        let response = try refresh(login.refresh, [("audience", "files")])
        let shaped = try access(response)
        XCTAssertEqual(try tokenInfo(shaped), ["sub": "alice", "client_id": "cli", "aud": "files", "audience": "files"])
        let both = try refresh(try XCTUnwrap(response.json?["refresh_token"]?.stringValue),
                               [("audience", "api"), ("resource", "https://api.example.com")])
        XCTAssertEqual(jwtClaims(try access(both))?["aud"], ["https://api.example.com", "api"])
    }

    func testUnknownOrMalformedTargetIsInvalidTargetAndSpendsNothing() throws {
        let login = try passwordGrant()
        let cases: [((String, String), String)] = [
            (("resource", "https://unknown.example.com"), "unknown resource https://unknown.example.com"),
            (("resource", "not a uri"), "resource must be an absolute URI without a fragment (RFC 8707)"),
            (("resource", "https://api.example.com#frag"), "resource must be an absolute URI without a fragment (RFC 8707)"),
            (("resource", "/relative"), "resource must be an absolute URI without a fragment (RFC 8707)"),
            (("audience", "nobody"), "unknown audience nobody"),
            (("audience", "say \"hi\""), "unknown audience"),
        ]
        for (parameter, description) in cases {
            let refused = try refresh(login.refresh, [parameter])
            XCTAssertEqual(refused.status, 400, "\(parameter)")
            XCTAssertEqual(refused.json, ["error": "invalid_target", "error_description": .string(description)], "\(parameter)")
            XCTAssertEqual(refused.header("Cache-Control"), "no-store")
        }
        XCTAssertEqual(try refresh(login.refresh, []).status, 200, "a refused target leaves the refresh token unspent")
        XCTAssertEqual(issuer.count("refresh_token:alice"), 1, "refused requests issue nothing")
    }

    func testNarrowingScopeOnRefresh() throws {
        let login = try passwordGrant(scope: "openid profile email")
        let response = try refresh(login.refresh, [("scope", "profile")])
        let narrow = try access(response)
        XCTAssertEqual(response.json?["scope"], "profile")
        XCTAssertNil(response.json?["id_token"], "no openid, no ID token")
        XCTAssertEqual(try tokenInfo(narrow), ["sub": "alice", "client_id": "cli", "aud": "cli", "scope": "profile"])

        let rotated = try XCTUnwrap(response.json?["refresh_token"]?.stringValue)
        let wider = try refresh(rotated, [("scope", "profile admin")])
        XCTAssertEqual(wider.status, 400)
        XCTAssertEqual(wider.json, ["error": "invalid_scope", "error_description": "scope admin was not granted; the grant has openid profile email"])
        let full = try refresh(rotated, [("scope", "email openid profile")])
        XCTAssertEqual(full.json?["scope"], "email openid profile",
                       "the rotated refresh token keeps the original grant (RFC 6749 §6), not the narrowed scope")
    }

    func testScopeOnRefreshOfAGrantWithoutScope() throws {
        let login = try passwordGrant()
        let refused = try refresh(login.refresh, [("scope", "read")])
        XCTAssertEqual(refused.json, ["error": "invalid_scope", "error_description": "scope read was not granted; the grant has no scope"])
    }

    func testReuseDetectionAcrossShapes() throws {
        let login = try passwordGrant(scope: "openid profile")
        let first = try refresh(login.refresh, [("scope", "profile"), ("resource", "https://api.example.com")])
        let firstAccess = try access(first)
        let rotated = try XCTUnwrap(first.json?["refresh_token"]?.stringValue)

        let reuse = try refresh(login.refresh, [("resource", "https://files.example.com")])
        XCTAssertEqual(reuse.status, 400)
        XCTAssertEqual(reuse.json?["error"], "invalid_grant", "a retired refresh token is reuse whatever shape it asks for")
        XCTAssertEqual(try refresh(rotated, []).json?["error"], "invalid_grant", "the whole family is revoked")
        XCTAssertEqual(try get("/api/token", bearer: firstAccess).status, 401)
    }

    func testRefreshesAreCountedPerUserAndShape() throws {
        var alice = try passwordGrant(scope: "openid profile").refresh
        let bobLogin = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "bob"), ("password", "builder")])
        var bob = try XCTUnwrap(bobLogin.json?["refresh_token"]?.stringValue)
        func step(_ refreshToken: inout String, _ extra: [(String, String)]) throws {
            let response = try refresh(refreshToken, extra)
            XCTAssertEqual(response.status, 200, response.text)
            refreshToken = try XCTUnwrap(response.json?["refresh_token"]?.stringValue)
        }
        try step(&alice, [])
        try step(&alice, [("resource", "https://api.example.com")])
        try step(&alice, [("resource", "https://api.example.com")])
        try step(&alice, [("scope", "profile openid"), ("audience", "api"), ("resource", "https://files.example.com")])
        try step(&bob, [("resource", "https://api.example.com")])
        XCTAssertEqual(try refresh(alice, [("scope", "admin")]).status, 400)

        let expected: [String: Int] = [
            "refresh_token:alice": 4,
            "refresh_token:alice:default": 1,
            "refresh_token:alice:resource=https://api.example.com": 2,
            "refresh_token:alice:audience=api;resource=https://files.example.com;scope=openid,profile": 1,
            "refresh_token:bob": 1,
            "refresh_token:bob:resource=https://api.example.com": 1,
        ]
        for (name, count) in expected {
            XCTAssertEqual(issuer.count(name), count, name)
        }
        var grants = JSONObject()
        for (name, count) in expected { grants[name] = .int(Int64(count)) }
        XCTAssertEqual(try get("/_admin/grants").json, ["grants": .object(grants)])
        XCTAssertEqual(issuer.count("token.refresh_token"), 6, "the endpoint counter still counts requests")
        XCTAssertNil(issuer.counts["refresh_token:alice"], "the endpoint table is unchanged")
        issuer.resetCounts()
        XCTAssertEqual(issuer.count("refresh_token:alice"), 0)
    }

    func testClientCredentialsWithShape() throws {
        let svc = (id: "svc", secret: "svc-secret")
        let response = try token([("grant_type", "client_credentials"), ("scope", "read"), ("audience", "api")], basic: svc)
        XCTAssertEqual(try tokenInfo(try access(response)), ["sub": "svc", "client_id": "svc", "aud": "api", "scope": "read", "audience": "api"])
        let resource = try token([("grant_type", "client_credentials"), ("resource", "https://files.example.com")], basic: svc)
        XCTAssertEqual(try tokenInfo(try access(resource))?["aud"], "https://files.example.com")

        let refused = try token([("grant_type", "client_credentials"), ("scope", "read admin")], basic: svc)
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.json, ["error": "invalid_scope", "error_description": "scope admin is not allowed for client svc; allowed: read write"])
        let unknown = try token([("grant_type", "client_credentials"), ("resource", "https://elsewhere.example")], basic: svc)
        XCTAssertEqual(unknown.json?["error"], "invalid_target")

        XCTAssertEqual(issuer.count("client_credentials:svc"), 2)
        XCTAssertEqual(issuer.count("client_credentials:svc:audience=api;scope=read"), 1)
        XCTAssertEqual(issuer.count("client_credentials:svc:resource=https://files.example.com"), 1)
    }

    func testOtherGrantsAcceptATarget() throws {
        let password = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "bob"), ("password", "builder"),
                                  ("resource", "https://api.example.com")])
        XCTAssertEqual(try tokenInfo(try access(password))?["resource"], "https://api.example.com")
        let refused = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "bob"), ("password", "builder"),
                                 ("audience", "nobody")])
        XCTAssertEqual(refused.json?["error"], "invalid_target")
    }

    /// A token without shape reads as before: `/api/me` is unchanged, and the session API's
    /// tokens describe themselves without a client or audience.
    func testUnshapedTokensAreUnchanged() throws {
        let login = try passwordGrant(scope: "openid profile")
        XCTAssertEqual(jwtClaims(login.access)?["aud"], "cli")
        XCTAssertEqual(try get("/api/me", bearer: login.access).text,
                       #"{"sub":"alice","name":"Alice","email":"alice@example.com","preferred_username":"alice"}"#)
        XCTAssertEqual(try get("/api/token", bearer: login.access).text,
                       #"{"sub":"alice","client_id":"cli","aud":"cli","scope":"openid profile"}"#)
        let session = try XCTUnwrap(try sessionLogin("bob", "builder").json?["jwt"]?.stringValue)
        XCTAssertEqual(try tokenInfo(session), ["sub": "bob"])
        XCTAssertEqual(try get("/api/token").status, 401)
        XCTAssertEqual(try get("/api/token", bearer: "garbage").status, 401)
    }
}

final class ShapedRefreshGraceTests: IssuerTestCase {
    override var options: DevIssuerOptions { DevIssuerOptions(refreshTokenReuseGrace: 30) }

    /// A replay within the grace period answers the first use's tokens, whatever shape it asks
    /// for, and counts as a refresh of the shape it asked for (so a duplicate shows in the counts).
    func testReplayWithinGraceIsCounted() throws {
        let login = try passwordGrant(scope: "openid profile")
        let fields = [("grant_type", "refresh_token"), ("client_id", "cli"), ("refresh_token", login.refresh), ("resource", "https://api.example.com")]
        let first = try token(fields)
        XCTAssertEqual(first.status, 200, first.text)
        let replay = try token(fields)
        XCTAssertEqual(replay.json?["access_token"], first.json?["access_token"])
        XCTAssertEqual(issuer.count("refresh_token:alice:resource=https://api.example.com"), 2)
    }
}
