import DevIssuer
import JSON
import XCTest

/// RFC 8693 exchange at the dev issuer, ID-JAGs (draft-ietf-oauth-identity-assertion-authz-grant) and a second
/// issuer, trusting the first, that accepts them with the jwt-bearer grant.
final class TokenExchangeTests: IssuerTestCase {
    static let exchange = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let idJag = "urn:ietf:params:oauth:token-type:id-jag"

    func type(_ name: String) -> String { "urn:ietf:params:oauth:token-type:\(name)" }

    func openIDLogin() throws -> (access: String, refresh: String, id: String) {
        let response = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "alice"), ("password", "wonderland"), ("scope", "openid")])
        let json = try XCTUnwrap(response.json)
        return (try XCTUnwrap(json["access_token"]?.stringValue), try XCTUnwrap(json["refresh_token"]?.stringValue), try XCTUnwrap(json["id_token"]?.stringValue))
    }

    func testEachSubjectTypeExchangesForAnAccessTokenOfItsUser() throws {
        let tokens = try openIDLogin()
        for (subject, kind) in [(tokens.access, "access_token"), (tokens.id, "id_token"), (tokens.refresh, "refresh_token")] {
            let response = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", subject),
                                      ("subject_token_type", type(kind)), ("audience", "api")])
            XCTAssertEqual(response.status, 200, "\(kind): \(response.text)")
            XCTAssertEqual(response.json?["issued_token_type"]?.stringValue, type("access_token"))
            XCTAssertNil(response.json?["refresh_token"])
            let claims = try XCTUnwrap(jwtClaims(try XCTUnwrap(response.json?["access_token"]?.stringValue)))
            XCTAssertEqual(claims["sub"], "alice")
            XCTAssertEqual(claims["aud"], "api")
        }
        // The refresh token was presented, not spent.
        XCTAssertEqual(try refreshGrant(tokens.refresh).status, 200)
    }

    func testBadSubjectTokensAreInvalidRequest() throws {
        let tokens = try openIDLogin()
        for (subject, kind) in [("nope", "access_token"), (tokens.access, "id_token"), (tokens.id, "refresh_token"), (tokens.access, "saml2")] {
            let response = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", subject), ("subject_token_type", type(kind))])
            XCTAssertEqual(response.status, 400, kind)
            XCTAssertEqual(response.json?["error"], "invalid_request", kind)
        }
        let missing = try token([("grant_type", Self.exchange), ("client_id", "cli")])
        XCTAssertEqual(missing.json?["error"], "invalid_request")
    }

    func testAnActorIsNamedInAct() throws {
        let tokens = try openIDLogin()
        let service = try token([("grant_type", "client_credentials")], basic: ("svc", "svc-secret"))
        let actor = try XCTUnwrap(service.json?["access_token"]?.stringValue)
        let response = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", tokens.access),
                                  ("subject_token_type", type("access_token")), ("actor_token", actor), ("actor_token_type", type("access_token"))])
        XCTAssertEqual(response.status, 200, response.text)
        let claims = try XCTUnwrap(jwtClaims(try XCTUnwrap(response.json?["access_token"]?.stringValue)))
        XCTAssertEqual(claims["act"], ["sub": "svc"])
    }

    func testIDJAGIsASignedJWTTheTrustingServerAccepts() throws {
        var options = DevIssuerOptions()
        options.trustedIssuers = [issuer.baseURL]
        let server = DevIssuer(options: options)
        try server.start()
        defer { server.stop() }
        let tokens = try openIDLogin()
        let response = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", tokens.id),
                                  ("subject_token_type", type("id_token")), ("requested_token_type", Self.idJag),
                                  ("audience", server.baseURL), ("resource", server.baseURL + "/api"), ("scope", "read")])
        XCTAssertEqual(response.status, 200, response.text)
        XCTAssertEqual(response.json?["issued_token_type"]?.stringValue, Self.idJag)
        XCTAssertEqual(response.json?["token_type"], "N_A")
        let jag = try XCTUnwrap(response.json?["access_token"]?.stringValue)
        let header = try XCTUnwrap(jwtHeader(jag))
        XCTAssertEqual(header["typ"], "oauth-id-jag+jwt")
        XCTAssertEqual(header["alg"], "ES256")
        let claims = try XCTUnwrap(jwtClaims(jag))
        XCTAssertEqual(claims["iss"]?.stringValue, issuer.baseURL)
        XCTAssertEqual(claims["sub"], "alice")
        XCTAssertEqual(claims["aud"]?.stringValue, server.baseURL)
        XCTAssertEqual(claims["client_id"], "cli")
        XCTAssertEqual(claims["resource"]?.stringValue, server.baseURL + "/api")
        XCTAssertEqual(claims["scope"], "read")
        XCTAssertNotNil(claims["jti"]?.stringValue)
        XCTAssertNotNil(claims["exp"]?.intValue)
        XCTAssertNotNil(claims["iat"]?.intValue)

        // The trusting server's metadata lists the grant; this one's does not.
        let metadata = try TestConnection(port: server.port).request("GET", "/.well-known/oauth-authorization-server", headers: [("Connection", "close")])
        XCTAssertTrue(metadata.json?["grant_types_supported"]?.arrayValue?.contains(.string(Self.jwtBearer)) == true)
        XCTAssertFalse(try get("/.well-known/oauth-authorization-server").json?["grant_types_supported"]?.arrayValue?.contains(.string(Self.jwtBearer)) == true)

        func bearer(_ assertion: String, client: String = "cli") throws -> TestResponse {
            let body = [("grant_type", Self.jwtBearer), ("client_id", client), ("assertion", assertion)]
                .map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
            return try TestConnection(port: server.port).request("POST", "/token", headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Connection", "close")],
                                                                 body: Array(body.utf8))
        }
        let granted = try bearer(jag)
        XCTAssertEqual(granted.status, 200, granted.text)
        let access = try XCTUnwrap(jwtClaims(try XCTUnwrap(granted.json?["access_token"]?.stringValue)))
        XCTAssertEqual(access["sub"], "alice")
        XCTAssertEqual(access["aud"]?.stringValue, server.baseURL + "/api")
        XCTAssertNil(granted.json?["refresh_token"])

        // Another client, a tampered signature, and this (untrusting) issuer are refused.
        XCTAssertEqual(try bearer(jag, client: "demo").json?["error"], "invalid_grant")
        let parts = jag.split(separator: ".")
        let forged = "\(parts[0]).\(parts[1]).\(String(parts[2].reversed()))"
        XCTAssertEqual(try bearer(forged).json?["error"], "invalid_grant")
        let here = try token([("grant_type", Self.jwtBearer), ("client_id", "cli"), ("assertion", jag)])
        XCTAssertEqual(here.json?["error"], "unsupported_grant_type")
    }

    func testIDJAGNeedsAnIDTokenAndAnAudience() throws {
        let tokens = try openIDLogin()
        let fromAccess = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", tokens.access),
                                    ("subject_token_type", type("access_token")), ("requested_token_type", Self.idJag), ("audience", "http://127.0.0.1:1")])
        XCTAssertEqual(fromAccess.json?["error"], "invalid_request")
        let noAudience = try token([("grant_type", Self.exchange), ("client_id", "cli"), ("subject_token", tokens.id),
                                    ("subject_token_type", type("id_token")), ("requested_token_type", Self.idJag)])
        XCTAssertEqual(noAudience.json?["error"], "invalid_request")
    }
}
