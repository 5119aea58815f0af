import DevIssuer
import JSON
import XCTest

final class FaultInjectionTests: IssuerTestCase {
    func testFailNextAnswersStatusThenRecovers() throws {
        issuer.failNext(2)
        let first = try sessionLogin()
        XCTAssertEqual(first.status, 503)
        XCTAssertEqual(first.json?["error"], "injected_fault")
        XCTAssertEqual(try sessionLogin().status, 503)
        XCTAssertEqual(try sessionLogin().status, 201)
        XCTAssertEqual(issuer.count("session"), 3, "faulted requests are counted")

        issuer.failNext(1, status: 429)
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 429)
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 200)
    }

    func testAnswerNextRepliesVerbatimToTheNamedEndpointOnly() throws {
        issuer.answerNext("session", status: 403, body: "")
        issuer.answerNext("session", status: 200, body: #"{"jwt":"a","jwt":"b"}"#)
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 200, "other endpoints are not affected")
        let empty = try sessionLogin()
        XCTAssertEqual(empty.status, 403)
        XCTAssertEqual(empty.body, [])
        let duplicate = try sessionLogin()
        XCTAssertEqual(duplicate.status, 200)
        XCTAssertEqual(String(decoding: duplicate.body, as: UTF8.self), #"{"jwt":"a","jwt":"b"}"#)
        XCTAssertEqual(try sessionLogin().status, 201, "then the issuer answers as usual")
        XCTAssertEqual(issuer.count("session"), 3)
    }

    func testDropNextClosesConnectionWithoutAnswer() throws {
        issuer.dropNext(1)
        let connection = try TestConnection(port: port)
        try connection.send("GET /.well-known/openid-configuration HTTP/1.1\r\nHost: x\r\n\r\n")
        XCTAssertTrue(connection.closesWithoutResponse())
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 200)
        XCTAssertEqual(issuer.count("discovery"), 2)
    }

    func testLatencyDelaysResponsesButNotAdmin() throws {
        issuer.setLatency(milliseconds: 300)
        var start = Date()
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 200)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.29)
        start = Date()
        XCTAssertEqual(try get("/_admin/stats").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.25)
        issuer.setLatency(milliseconds: 0)
        start = Date()
        XCTAssertEqual(try get("/.well-known/openid-configuration").status, 200)
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.25)
    }

    func testCountsPerEndpoint() throws {
        _ = try sessionLogin()
        let jwt = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        _ = try postBearer("/sessions/refresh", jwt)
        let grant = try passwordGrant()
        _ = try refreshGrant(grant.refresh)
        _ = try token([("grant_type", "client_credentials")], basic: ("svc", "svc-secret"))
        _ = try postForm("/revoke", [("token", grant.access), ("client_id", "cli")])
        _ = try get("/userinfo", bearer: grant.access)
        _ = try get("/.well-known/oauth-authorization-server")
        _ = try get("/_admin/stats")
        _ = try get("/nowhere")
        XCTAssertEqual(issuer.counts, [
            "session": 2, "sessionRefresh": 1, "token": 3, "token.password": 1, "token.refresh_token": 1,
            "token.client_credentials": 1, "revoke": 1, "userinfo": 1, "discovery": 1,
        ])
        XCTAssertEqual(issuer.count("sessionLogout"), 0)
        issuer.resetCounts()
        XCTAssertEqual(issuer.counts, [:])
    }

    func testAdminEndpointsOverHTTP() throws {
        _ = try sessionLogin()
        let stats = try get("/_admin/stats")
        XCTAssertEqual(stats.json, ["counts": ["session": 1]])

        let fault = try postJSON("/_admin/fault", ["fail": 1, "status": 500, "latencyMs": 0])
        XCTAssertEqual(fault.status, 200)
        XCTAssertEqual(fault.json, [:])
        XCTAssertEqual(try sessionLogin().status, 500)
        XCTAssertEqual(try sessionLogin().status, 201)

        XCTAssertEqual(try postJSON("/_admin/fault", ["drop": 5]).status, 200)
        XCTAssertEqual(try postJSON("/_admin/reset", [:]).status, 200)
        XCTAssertEqual(try sessionLogin().status, 201, "reset clears pending drops")
        XCTAssertEqual(try get("/_admin/stats").json, ["counts": ["session": 1]])

        let jwt = try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)
        XCTAssertEqual(try postJSON("/_admin/fault", ["revokeAll": true, "accessTokenLifetime": 5]).status, 200)
        XCTAssertEqual(try postBearer("/sessions/refresh", jwt).status, 401)
        let short = try XCTUnwrap(jwtClaims(try XCTUnwrap(try sessionLogin().json?["jwt"]?.stringValue)))
        XCTAssertEqual(short["exp"]?.intValue, (short["iat"]?.intValue).map { $0 + 5 })

        XCTAssertEqual(try postJSON("/_admin/fault", ["fial": 1]).status, 400)
        XCTAssertEqual(try postJSON("/_admin/fault", ["fail": "1"]).status, 400)
        XCTAssertEqual(try get("/_admin/fault").status, 405)
        XCTAssertEqual(try get("/_admin/nothing").status, 404)
    }
}
