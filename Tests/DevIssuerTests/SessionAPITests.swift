import DevIssuer
import JSON
import XCTest

final class SessionAPITests: IssuerTestCase {
    func testLoginWithGoodCredentialsReturnsJWTAndUser() throws {
        let before = Int64(Date().timeIntervalSince1970)
        let response = try sessionLogin()
        XCTAssertEqual(response.status, 201, response.text)
        XCTAssertEqual(response.header("Content-Type"), "application/json")
        let json = try XCTUnwrap(response.json)
        XCTAssertEqual(json["user"], ["id": "1", "username": "alice", "name": "Alice"])
        let jwt = try XCTUnwrap(json["jwt"]?.stringValue)
        let segments = jwtSegments(jwt)
        XCTAssertEqual(jwt.split(separator: ".").count, 3)
        XCTAssertEqual(segments.first ?? nil, ["alg": "HS256", "typ": "JWT"])
        let claims = try XCTUnwrap(jwtClaims(jwt))
        XCTAssertEqual(claims["sub"], "alice")
        XCTAssertEqual(claims["name"], "Alice")
        XCTAssertNotNil(claims["jti"]?.stringValue)
        let iat = try XCTUnwrap(claims["iat"]?.intValue)
        XCTAssertGreaterThanOrEqual(iat, before)
        XCTAssertEqual(claims["exp"]?.intValue, iat + 3600)
        XCTAssertEqual(try sessionLogin("bob", "builder").json?["user"]?["id"], "2")
    }

    func testLoginWithBadCredentialsOrBodyIsRejected() throws {
        let wrongPassword = try sessionLogin("alice", "nope")
        XCTAssertEqual(wrongPassword.status, 401)
        XCTAssertEqual(wrongPassword.json, ["error": "invalid credentials"])
        XCTAssertEqual(try sessionLogin("mallory", "wonderland").status, 401)
        XCTAssertEqual(try postJSON("/sessions", ["username": "alice", "password": "wonderland"]).status, 400)
        XCTAssertEqual(try send("POST", "/sessions", headers: [("Content-Type", "application/json")], body: Array("{not json".utf8)).status, 400)
    }

    func testRefreshIssuesNewTokenAndInvalidatesOld() throws {
        let first = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        let refreshed = try postBearer("/sessions/refresh", first)
        XCTAssertEqual(refreshed.status, 200, refreshed.text)
        XCTAssertEqual(refreshed.json?["user"]?["username"], "alice")
        let second = try XCTUnwrap(refreshed.json?["jwt"]?.stringValue)
        XCTAssertNotEqual(second, first)
        XCTAssertEqual(try postBearer("/sessions/refresh", first).status, 401)
        XCTAssertEqual(try get("/userinfo", bearer: first).status, 401)
        XCTAssertEqual(try get("/userinfo", bearer: second).status, 200)
        XCTAssertEqual(try send("POST", "/sessions/refresh").status, 401)
        XCTAssertEqual(try postBearer("/sessions/refresh", "not-a-token").status, 401)
    }

    func testExpiredSessionTokenCanStillBeRefreshed() throws {
        issuer.setAccessTokenLifetime(0)
        let expired = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: expired).status, 401)
        issuer.setAccessTokenLifetime(60)
        let refreshed = try postBearer("/sessions/refresh", expired)
        XCTAssertEqual(refreshed.status, 200)
        let claims = try XCTUnwrap(jwtClaims(try XCTUnwrap(refreshed.json?["jwt"]?.stringValue)))
        XCTAssertEqual(claims["exp"]?.intValue, (claims["iat"]?.intValue).map { $0 + 60 })
    }

    func testLogoutRevokesToken() throws {
        let jwt = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        let logout = try postBearer("/sessions/logout", jwt)
        XCTAssertEqual(logout.status, 200)
        XCTAssertEqual(logout.json, [:])
        XCTAssertEqual(try postBearer("/sessions/refresh", jwt).status, 401)
        XCTAssertEqual(try postBearer("/sessions/logout", "unknown").status, 401)
        XCTAssertEqual(issuer.count("sessionLogout"), 2)
    }

    func testRevokeAllInvalidatesSessions() throws {
        let jwt = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        issuer.revokeAll()
        XCTAssertEqual(try postBearer("/sessions/refresh", jwt).status, 401)
        let fresh = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        XCTAssertEqual(try postBearer("/sessions/refresh", fresh).status, 200)
    }
}
