import DevIssuer
import JSON
import XCTest

final class TokenEndpointTests: IssuerTestCase {
    override var options: DevIssuerOptions {
        var options = DevIssuerOptions()
        options.clients["odd client"] = "p@ss:word+"
        return options
    }

    func testPasswordGrant() throws {
        let response = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "alice"), ("password", "wonderland")])
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.header("Cache-Control"), "no-store")
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        let json = try XCTUnwrap(response.json)
        XCTAssertEqual(json["token_type"], "Bearer")
        XCTAssertEqual(json["expires_in"], 3600)
        XCTAssertNotNil(json["refresh_token"]?.stringValue)
        XCTAssertNil(json["id_token"])
        XCTAssertNil(json["scope"])
        let claims = try XCTUnwrap(jwtClaims(try XCTUnwrap(json["access_token"]?.stringValue)))
        XCTAssertEqual(claims["sub"], "alice")
        XCTAssertEqual(claims["iss"]?.stringValue, issuer.baseURL)
        XCTAssertEqual(claims["exp"]?.intValue, (claims["iat"]?.intValue).map { $0 + 3600 })
        XCTAssertEqual(issuer.count("token.password"), 1)
    }

    func testPasswordGrantWithOpenIDScopeIncludesIDToken() throws {
        let response = try token([("grant_type", "password"), ("client_id", "demo"), ("username", "bob"),
                                  ("password", "builder"), ("scope", "openid profile")])
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.json?["scope"], "openid profile")
        let idToken = try XCTUnwrap(response.json?["id_token"]?.stringValue)
        let claims = try XCTUnwrap(jwtClaims(idToken))
        XCTAssertEqual(claims["sub"], "bob")
        XCTAssertEqual(claims["name"], "Bob")
        XCTAssertEqual(claims["email"], "bob@example.com")
        XCTAssertEqual(claims["preferred_username"], "bob")
        XCTAssertEqual(claims["aud"], "demo")
        XCTAssertEqual(claims["iss"]?.stringValue, "http://127.0.0.1:\(port)")
        XCTAssertNotNil(claims["exp"]?.intValue)
        XCTAssertNotNil(claims["iat"]?.intValue)
    }

    func testPasswordGrantErrors() throws {
        let bad = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "alice"), ("password", "x")])
        XCTAssertEqual(bad.status, 400)
        XCTAssertEqual(bad.json?["error"], "invalid_grant")
        XCTAssertNotNil(bad.json?["error_description"]?.stringValue)
        XCTAssertEqual(bad.header("Cache-Control"), "no-store")
        let missing = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "alice")])
        XCTAssertEqual(missing.status, 400)
        XCTAssertEqual(missing.json?["error"], "invalid_request")
        let noGrant = try token([("client_id", "cli")])
        XCTAssertEqual(noGrant.json?["error"], "invalid_request")
        let unknownGrant = try token([("grant_type", "urn:example:magic"), ("client_id", "cli")])
        XCTAssertEqual(unknownGrant.status, 400)
        XCTAssertEqual(unknownGrant.json?["error"], "unsupported_grant_type")
        let repeated = try token([("grant_type", "password"), ("grant_type", "password"), ("client_id", "cli")])
        XCTAssertEqual(repeated.json?["error"], "invalid_request")
        XCTAssertEqual(issuer.count("token"), 5)
        XCTAssertEqual(issuer.count("token.password"), 3)
    }

    func testClientCredentialsWithBasicAuth() throws {
        let response = try token([("grant_type", "client_credentials")], basic: ("svc", "svc-secret"))
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertNotNil(response.json?["access_token"]?.stringValue)
        XCTAssertEqual(response.json?["expires_in"], 3600)
        XCTAssertNil(response.json?["refresh_token"])
        let claims = try XCTUnwrap(jwtClaims(try XCTUnwrap(response.json?["access_token"]?.stringValue)))
        XCTAssertEqual(claims["sub"], "svc")

        let post = try token([("grant_type", "client_credentials"), ("client_id", "svc"), ("client_secret", "svc-secret")])
        XCTAssertEqual(post.status, 200, post.text)
        let odd = try token([("grant_type", "client_credentials")], basic: ("odd client", "p@ss:word+"))
        XCTAssertEqual(odd.status, 200, odd.text)

        let wrongSecret = try token([("grant_type", "client_credentials")], basic: ("svc", "guess"))
        XCTAssertEqual(wrongSecret.status, 401)
        XCTAssertEqual(wrongSecret.json?["error"], "invalid_client")
        XCTAssertNotNil(wrongSecret.header("WWW-Authenticate"))
        let noSecret = try token([("grant_type", "client_credentials"), ("client_id", "svc")])
        XCTAssertEqual(noSecret.status, 401)
        XCTAssertEqual(noSecret.json?["error"], "invalid_client")
        let unknown = try token([("grant_type", "client_credentials")], basic: ("ghost", "x"))
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(unknown.json?["error"], "invalid_client")
        let anonymous = try token([("grant_type", "client_credentials")])
        XCTAssertEqual(anonymous.status, 401)
        XCTAssertEqual(issuer.count("token.client_credentials"), 7)
    }

    func testPublicClientIsRejectedForClientCredentials() throws {
        let response = try token([("grant_type", "client_credentials"), ("client_id", "cli")])
        XCTAssertEqual(response.status, 400)
        XCTAssertEqual(response.json?["error"], "unauthorized_client")
        let withSecret = try token([("grant_type", "client_credentials"), ("client_id", "cli"), ("client_secret", "made-up")])
        XCTAssertEqual(withSecret.status, 401)
    }

    func testRefreshTokenRotates() throws {
        let first = try passwordGrant(scope: "openid")
        let response = try refreshGrant(first.refresh)
        XCTAssertEqual(response.status, 200, response.text)
        let access2 = try XCTUnwrap(response.json?["access_token"]?.stringValue)
        let refresh2 = try XCTUnwrap(response.json?["refresh_token"]?.stringValue)
        XCTAssertNotEqual(access2, first.access)
        XCTAssertNotEqual(refresh2, first.refresh)
        XCTAssertNotNil(response.json?["id_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access2).status, 200)
        let third = try refreshGrant(refresh2)
        XCTAssertEqual(third.status, 200, third.text)
        XCTAssertEqual(try refreshGrant(refresh2, client: "demo").json?["error"], "invalid_grant")
        XCTAssertEqual(try refreshGrant("never-issued").json?["error"], "invalid_grant")
        let missing = try token([("grant_type", "refresh_token"), ("client_id", "cli")])
        XCTAssertEqual(missing.json?["error"], "invalid_request")
        XCTAssertEqual(issuer.count("token.refresh_token"), 5)
    }

    func testReusedRefreshTokenRevokesTheWholeFamily() throws {
        let first = try passwordGrant()
        let other = try passwordGrant()
        let rotated = try refreshGrant(first.refresh)
        let access2 = try XCTUnwrap(rotated.json?["access_token"]?.stringValue)
        let refresh2 = try XCTUnwrap(rotated.json?["refresh_token"]?.stringValue)

        let reuse = try refreshGrant(first.refresh)
        XCTAssertEqual(reuse.status, 400)
        XCTAssertEqual(reuse.json?["error"], "invalid_grant")
        let successor = try refreshGrant(refresh2)
        XCTAssertEqual(successor.status, 400)
        XCTAssertEqual(successor.json?["error"], "invalid_grant")
        XCTAssertEqual(try get("/userinfo", bearer: access2).status, 401)
        XCTAssertEqual(try get("/userinfo", bearer: first.access).status, 401)

        XCTAssertEqual(try get("/userinfo", bearer: other.access).status, 200, "another login's family is unaffected")
        XCTAssertEqual(try refreshGrant(other.refresh).status, 200)
    }

    func testRevokeAccessAndRefreshTokens() throws {
        let grant = try passwordGrant()
        let revokeAccess = try postForm("/revoke", [("token", grant.access), ("client_id", "cli")])
        XCTAssertEqual(revokeAccess.status, 200, revokeAccess.text)
        XCTAssertEqual(try get("/userinfo", bearer: grant.access).status, 401)
        XCTAssertEqual(try refreshGrant(grant.refresh).status, 200, "revoking an access token leaves the refresh token")

        let second = try passwordGrant()
        let revokeRefresh = try postForm("/revoke", [("token", second.refresh), ("token_type_hint", "refresh_token"), ("client_id", "cli")])
        XCTAssertEqual(revokeRefresh.status, 200)
        XCTAssertEqual(try refreshGrant(second.refresh).json?["error"], "invalid_grant")
        XCTAssertEqual(try get("/userinfo", bearer: second.access).status, 401, "family access tokens go with the refresh token")

        XCTAssertEqual(try postForm("/revoke", [("token", "unknown"), ("client_id", "cli")]).status, 200)
        XCTAssertEqual(try postForm("/revoke", [("token", "unknown")], basic: ("svc", "wrong")).status, 401)
        XCTAssertEqual(try postForm("/revoke", [("client_id", "cli")]).json?["error"], "invalid_request")
        XCTAssertEqual(issuer.count("revoke"), 5)
    }

    func testUserinfoValidExpiredAndRevoked() throws {
        let grant = try passwordGrant()
        let info = try get("/userinfo", bearer: grant.access)
        XCTAssertEqual(info.status, 200)
        XCTAssertEqual(info.json, ["sub": "alice", "name": "Alice", "email": "alice@example.com", "preferred_username": "alice"])

        issuer.setAccessTokenLifetime(0)
        let expired = try passwordGrant()
        let rejected = try get("/userinfo", bearer: expired.access)
        XCTAssertEqual(rejected.status, 401)
        XCTAssertEqual(rejected.header("WWW-Authenticate"), "Bearer error=\"invalid_token\"")
        XCTAssertEqual(try get("/userinfo", bearer: grant.access).status, 200, "lifetime changes apply to new tokens only")

        issuer.revokeAll()
        XCTAssertEqual(try get("/userinfo", bearer: grant.access).status, 401)
        XCTAssertEqual(try refreshGrant(grant.refresh).status, 400)
        XCTAssertEqual(try get("/userinfo").status, 401)
        XCTAssertEqual(try get("/userinfo", bearer: "garbage").status, 401)
        XCTAssertEqual(issuer.count("userinfo"), 6)
    }

    func testClientTokenIsNotAUser() throws {
        let response = try token([("grant_type", "client_credentials")], basic: ("svc", "svc-secret"))
        let access = try XCTUnwrap(response.json?["access_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access).status, 403)
    }

    func testDiscoveryDocuments() throws {
        for path in ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"] {
            let response = try get(path)
            XCTAssertEqual(response.status, 200)
            let json = try XCTUnwrap(response.json)
            XCTAssertEqual(json["issuer"]?.stringValue, issuer.baseURL)
            XCTAssertEqual(json["token_endpoint"]?.stringValue, issuer.baseURL + "/token")
            XCTAssertEqual(json["revocation_endpoint"]?.stringValue, issuer.baseURL + "/revoke")
            XCTAssertEqual(json["userinfo_endpoint"]?.stringValue, issuer.baseURL + "/userinfo")
            XCTAssertEqual(json["authorization_endpoint"]?.stringValue, issuer.baseURL + "/authorize")
            XCTAssertEqual(json["device_authorization_endpoint"]?.stringValue, issuer.baseURL + "/device_authorization")
            XCTAssertEqual(json["grant_types_supported"], ["password", "client_credentials", "refresh_token", "authorization_code",
                                                           "urn:ietf:params:oauth:grant-type:device_code", "urn:ietf:params:oauth:grant-type:token-exchange"])
            XCTAssertEqual(json["jwks_uri"]?.stringValue, issuer.baseURL + "/jwks")
            XCTAssertEqual(json["response_types_supported"], ["code"])
            XCTAssertEqual(json["code_challenge_methods_supported"], ["S256"])
            XCTAssertEqual(json["token_endpoint_auth_methods_supported"], ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none"])
            XCTAssertEqual(json["pushed_authorization_request_endpoint"]?.stringValue, issuer.baseURL + "/par")
            XCTAssertEqual(json["require_pushed_authorization_requests"], false)
            XCTAssertEqual(json["dpop_signing_alg_values_supported"], ["ES256"])
        }
        XCTAssertEqual(issuer.count("discovery"), 2)
    }
}

final class RefreshGraceTests: IssuerTestCase {
    override var options: DevIssuerOptions { DevIssuerOptions(refreshTokenReuseGrace: 30) }

    func testReuseWithinGraceReturnsTheSameSuccessor() throws {
        let first = try passwordGrant()
        let rotated = try refreshGrant(first.refresh)
        XCTAssertEqual(rotated.status, 200)
        let replay = try refreshGrant(first.refresh)
        XCTAssertEqual(replay.status, 200, replay.text)
        XCTAssertEqual(replay.json?["access_token"], rotated.json?["access_token"])
        XCTAssertEqual(replay.json?["refresh_token"], rotated.json?["refresh_token"])
        let refresh2 = try XCTUnwrap(rotated.json?["refresh_token"]?.stringValue)
        XCTAssertEqual(try refreshGrant(refresh2).status, 200, "the family survives a replay within the grace period")
    }
}
