import DevIssuer
import ES256
import Foundation
import JSON
import Wire
import XCTest

/// The dev issuer's PAR (RFC 9126) per client, signed client authentication (RFC 7523 §2.2:
/// `private_key_jwt` with a key registered through `/_admin/client`, `client_secret_jwt`), and
/// FAPI 2.0's refusals for a client held to it — each refusal in the server's words.
final class PushedAuthorizationTests: IssuerTestCase {
    static let redirectURI = AuthorizationCodeTests.redirectURI
    static let verifier = AuthorizationCodeTests.verifier

    private var request: [(String, String)] {
        [("response_type", "code"), ("client_id", "cli-par"), ("redirect_uri", Self.redirectURI), ("state", "s1"),
         ("code_challenge", AuthorizationCodeTests.challenge), ("code_challenge_method", "S256"), ("scope", "openid")]
    }

    private func query(_ pairs: [(String, String)]) -> String { pairs.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&") }

    private func redirect(_ response: TestResponse) throws -> [String: String] {
        let location = try XCTUnwrap(response.header("Location"), response.text)
        return Dictionary((URLComponents(string: location)?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { a, _ in a })
    }

    // MARK: PAR

    func testAClientThatMustPushIsRefusedAPlainRequestAndLogsInThroughAPushedOne() throws {
        let plain = try redirect(try get("/authorize?" + query(request)))
        XCTAssertEqual(plain["error"], "invalid_request")
        XCTAssertEqual(plain["error_description"], "Pushed Authorization Request must be used")

        let pushed = try postForm("/par", request)
        XCTAssertEqual(pushed.status, 201, pushed.text)
        let uri = try XCTUnwrap(pushed.json?["request_uri"]?.stringValue)
        XCTAssertTrue(uri.hasPrefix("urn:ietf:params:oauth:request_uri:"))
        XCTAssertEqual(pushed.json?["expires_in"], 60)

        let form = try get("/authorize?" + query([("client_id", "cli-par"), ("request_uri", uri)]))
        XCTAssertEqual(form.status, 200, "the form for the pushed request: \(form.text)")
        XCTAssertTrue(form.text.contains(uri), "the form posts the request_uri back")
        let approved = try postForm("/authorize", [("client_id", "cli-par"), ("request_uri", uri), ("username", "alice"), ("password", "wonderland"),
                                                   ("action", "approve")])
        let back = try redirect(approved)
        XCTAssertEqual(back["state"], "s1")
        let code = try XCTUnwrap(back["code"])
        let tokens = try token([("grant_type", "authorization_code"), ("client_id", "cli-par"), ("code", code),
                                ("redirect_uri", Self.redirectURI), ("code_verifier", Self.verifier)])
        XCTAssertEqual(tokens.status, 200, tokens.text)
    }

    func testPushingIsOptionalForOtherClientsAndARequestURIBelongsToItsClient() throws {
        var mine = request
        mine[1] = ("client_id", "cli")
        XCTAssertEqual(try get("/authorize?" + query(mine)).status, 200, "cli may send its request in the URL")
        let pushed = try postForm("/par", mine)
        XCTAssertEqual(pushed.status, 201, pushed.text)
        let uri = try XCTUnwrap(pushed.json?["request_uri"]?.stringValue)
        XCTAssertEqual(try get("/authorize?" + query([("client_id", "cli-par"), ("request_uri", uri)])).status, 400, "another client's request_uri")
        XCTAssertEqual(try get("/authorize?" + query([("client_id", "cli"), ("request_uri", "urn:ietf:params:oauth:request_uri:nope")])).status, 400)
        let refused = try postForm("/par", mine + [("request_uri", uri)])
        XCTAssertEqual(refused.status, 400)
        var bad = mine
        bad[0] = ("response_type", "token")
        let unsupported = try postForm("/par", bad)
        XCTAssertEqual(unsupported.status, 400)
        XCTAssertEqual(unsupported.json?["error"], "unsupported_response_type", "a PAR error is JSON, not a redirect")
    }

    // MARK: Signed client authentication

    private func assertion(client: String, alg: String, audience: String? = nil, jti: String = UUID().uuidString, exp: Int = 60,
                           sign: ([UInt8]) throws -> [UInt8]) throws -> String {
        let now = Int64(Date().timeIntervalSince1970)
        let header = Base64URL.encode(JSONSerializer.bytes(["alg": .string(alg), "typ": "JWT"]))
        let claims = Base64URL.encode(JSONSerializer.bytes(["iss": .string(client), "sub": .string(client), "aud": .string(audience ?? issuer.baseURL + "/token"),
                                                            "jti": .string(jti), "iat": .int(now), "exp": .int(now + Int64(exp))]))
        return "\(header).\(claims)." + Base64URL.encode(try sign(Array("\(header).\(claims)".utf8)))
    }

    private func clientCredentials(_ assertion: String) throws -> TestResponse {
        try token([("grant_type", "client_credentials"), ("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                   ("client_assertion", assertion)])
    }

    func testClientSecretJWT() throws {
        let secret = Array("svc-secret".utf8)
        let good = try assertion(client: "svc", alg: "HS256") { try HMACSHA256.mac(key: secret, message: $0) }
        XCTAssertEqual(try clientCredentials(good).status, 200)
        let replayed = try clientCredentials(good)
        XCTAssertEqual(replayed.status, 401)
        XCTAssertEqual(replayed.json?["error_description"], "client_assertion's jti was already used")
        let wrongSecret = try assertion(client: "svc", alg: "HS256") { try HMACSHA256.mac(key: Array("guess".utf8), message: $0) }
        XCTAssertEqual(try clientCredentials(wrongSecret).status, 401)
        let elsewhere = try assertion(client: "svc", alg: "HS256", audience: "https://other.example/token") { try HMACSHA256.mac(key: secret, message: $0) }
        XCTAssertEqual(try clientCredentials(elsewhere).json?["error_description"]?.stringValue?.hasPrefix("client_assertion's aud must be"), true)
        let long = try assertion(client: "svc", alg: "HS256", exp: 3600) { try HMACSHA256.mac(key: secret, message: $0) }
        XCTAssertEqual(try clientCredentials(long).status, 401, "an assertion must be short-lived")
    }

    func testPrivateKeyJWTWithARegisteredKeyAndTheIssuerAsAudience() throws {
        let key = try P256Key.generate()
        let jwk = try JSONParser.parse(Array(key.publicJWK.utf8))
        XCTAssertEqual(try postJSON("/_admin/client", ["clientId": "bank", "secret": .null, "jwk": jwk]).status, 200)
        let signed = try assertion(client: "bank", alg: "ES256", audience: issuer.baseURL) { try key.sign($0) }
        XCTAssertEqual(try clientCredentials(signed).status, 200, "a client with a registered key is confidential")
        let other = try P256Key.generate()
        let forged = try assertion(client: "bank", alg: "ES256") { try other.sign($0) }
        let refused = try clientCredentials(forged)
        XCTAssertEqual(refused.status, 401)
        XCTAssertEqual(refused.json?["error"], "invalid_client")
        let noKey = try assertion(client: "svc", alg: "ES256") { try key.sign($0) }
        XCTAssertEqual(try clientCredentials(noKey).json?["error_description"], "private_key_jwt: client svc has no registered public key")
    }

    // MARK: FAPI 2.0

    func testAFAPIClientIsRefusedWhatFAPIForbids() throws {
        let key = try P256Key.generate()
        let jwk = try JSONParser.parse(Array(key.publicJWK.utf8))
        XCTAssertEqual(try postJSON("/_admin/client", ["clientId": "fapi", "secret": "fapi-secret", "jwk": jwk, "fapi2": true]).status, 200)
        let basic = try token([("grant_type", "client_credentials")], basic: ("fapi", "fapi-secret"))
        XCTAssertEqual(basic.status, 401)
        XCTAssertEqual(basic.json?["error_description"], "FAPI 2.0 requires private_key_jwt client authentication (not client_secret_basic)")

        let bearer = try clientCredentials(try assertion(client: "fapi", alg: "ES256") { try key.sign($0) })
        XCTAssertEqual(bearer.status, 400, "no DPoP proof: a plain Bearer token is not issued")
        XCTAssertEqual(bearer.json?["error_description"], "FAPI 2.0 requires sender-constrained tokens: send a DPoP proof")

        var plain = request
        plain[1] = ("client_id", "fapi")
        let unpushed = try redirect(try get("/authorize?" + query(plain)))
        XCTAssertEqual(unpushed["error_description"], "FAPI 2.0 requires pushed authorization requests: Pushed Authorization Request must be used")
        plain[0] = ("response_type", "code id_token")
        let pushedAuth = try assertion(client: "fapi", alg: "ES256", audience: issuer.baseURL + "/par") { try key.sign($0) }
        let hybrid = try postForm("/par", plain + [("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"),
                                                    ("client_assertion", pushedAuth)])
        XCTAssertEqual(hybrid.json?["error_description"], "FAPI 2.0 allows only response_type code, not code id_token")
    }
}
