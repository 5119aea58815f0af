import XCTest
@testable import AuthCore
import JSON

/// The pure parts of the derived flows (issue 32 items 4, 5): their configuration, the requests they make
/// and how an ID-JAG answer is read.
final class TokenExchangeTests: XCTestCase {
    private func parse(_ providers: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(#"{"providers": [\#(providers)]}"#.utf8), file: "config.json")
    }

    static let corp = #"{"id": "corp", "flow": "password", "origins": ["https://corp.example"], "issuer": "https://idp.example", "clientId": "cli", "clientSecret": "TOP-SECRET"}"#

    func testADerivedProviderTakesWhatItDoesNotConfigureFromItsSubject() throws {
        let config = try parse(Self.corp + #", {"id": "x", "flow": "tokenExchange", "from": "corp", "subjectTokenType": "id_token", "audience": "api", "requestedTokenType": "jwt", "origins": ["https://x.example"]}, {"id": "api", "flow": "idJag", "from": "corp", "issuer": "https://as.example", "resource": "https://api.example/", "origins": ["https://api.example"]}"#)
        let exchanged = config.providers[1]
        XCTAssertEqual(exchanged.subject, SubjectConfig(from: "corp", tokenType: .idToken, audience: "api", resource: nil,
                                                        requestedTokenType: "urn:ietf:params:oauth:token-type:jwt", actor: nil))
        XCTAssertEqual(exchanged.issuer, "https://idp.example", "the exchange is at the subject's server")
        XCTAssertEqual(exchanged.clientId, "cli")
        XCTAssertEqual(exchanged.clientSecret, "TOP-SECRET")
        let api = config.providers[2]
        XCTAssertEqual(api.issuer, "https://as.example", "an idJag provider's server is its own")
        XCTAssertEqual(api.clientId, "cli")
        XCTAssertEqual(api.subject?.resource, "https://api.example/")
    }

    func testWhatADerivedProviderMustName() {
        let cases: [(String, String)] = [
            (#"{"id": "x", "flow": "tokenExchange", "from": "nobody", "subjectTokenType": "access_token", "origins": ["https://x.example"]}"#,
             #"$.providers[1].from: no provider "nobody" is configured"#),
            (#"{"id": "x", "flow": "tokenExchange", "from": "x", "subjectTokenType": "access_token", "origins": ["https://x.example"]}"#,
             "$.providers[1].from: a provider cannot be its own from"),
            (#"{"id": "x", "flow": "tokenExchange", "from": "corp", "subjectTokenType": "saml", "origins": ["https://x.example"]}"#,
             "expected one of access_token, id_token, refresh_token"),
            (#"{"id": "x", "flow": "tokenExchange", "from": "corp", "origins": ["https://x.example"]}"#,
             #"missing required key "subjectTokenType""#),
            (#"{"id": "x", "flow": "idJag", "from": "corp", "origins": ["https://x.example"]}"#, #"flow "idJag" requires "issuer""#),
            (#"{"id": "x", "flow": "idJag", "from": "corp", "issuer": "https://as.example", "subjectTokenType": "id_token", "origins": ["https://x.example"]}"#,
             #""subjectTokenType" is not used by flow "idJag""#),
            (#"{"id": "x", "flow": "tokenExchange", "from": "corp", "subjectTokenType": "access_token", "origins": ["https://x.example"]}, {"id": "y", "flow": "idJag", "from": "x", "issuer": "https://as.example", "origins": ["https://y.example"]}"#,
             #"provider "x" has no login of its own"#),
        ]
        for (provider, expected) in cases {
            XCTAssertThrowsError(try parse(Self.corp + ", " + provider), expected) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(error)")
            }
        }
    }

    func testTheExchangeRequest() {
        let pairs = TokenExchange.exchangePairs(subject: .init(token: "S", type: .accessToken), actor: .init(token: "A", type: .accessToken),
                                                requestedTokenType: nil, audience: "api", resource: "https://api.example/", scopes: ["read", "write"])
        XCTAssertEqual(pairs.map { "\($0.0)=\($0.1)" }, [
            "grant_type=urn:ietf:params:oauth:grant-type:token-exchange", "subject_token=S",
            "subject_token_type=urn:ietf:params:oauth:token-type:access_token", "actor_token=A",
            "actor_token_type=urn:ietf:params:oauth:token-type:access_token", "audience=api", "resource=https://api.example/", "scope=read write",
        ])
    }

    func testTheIDJAGAndJWTBearerRequests() {
        let jag = TokenExchange.idJagPairs(idToken: "ID", authorizationServer: "https://as.example", resource: "https://api.example/", scopes: [])
        XCTAssertEqual(jag.map { "\($0.0)=\($0.1)" }, [
            "grant_type=urn:ietf:params:oauth:grant-type:token-exchange", "subject_token=ID",
            "subject_token_type=urn:ietf:params:oauth:token-type:id_token", "requested_token_type=urn:ietf:params:oauth:token-type:id-jag",
            "audience=https://as.example", "resource=https://api.example/",
        ])
        let bearer = TokenExchange.jwtBearerPairs(assertion: "JAG", resource: nil, scopes: ["read"])
        XCTAssertEqual(bearer.map { "\($0.0)=\($0.1)" }, ["grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion=JAG", "scope=read"])
    }

    func testAnIDJAGAnswer() {
        func answer(_ status: Int, _ body: String) -> TokenExchange.IDJAGAnswer {
            TokenExchange.idJag(from: HTTPResponse(status: status, body: Array(body.utf8)))
        }
        XCTAssertEqual(answer(200, #"{"access_token": "JAG", "issued_token_type": "urn:ietf:params:oauth:token-type:id-jag", "token_type": "N_A", "expires_in": 300}"#),
                       .issued("JAG"))
        XCTAssertEqual(answer(200, #"{"access_token": "AT", "issued_token_type": "urn:ietf:params:oauth:token-type:access_token", "token_type": "Bearer"}"#),
                       .notAnIDJAG("the answer's issued_token_type is \"urn:ietf:params:oauth:token-type:access_token\", not urn:ietf:params:oauth:token-type:id-jag"))
        XCTAssertEqual(answer(400, #"{"error": "invalid_request", "error_description": "bad subject"}"#),
                       .result(.rejected(error: "invalid_request", description: "bad subject")))
        XCTAssertEqual(answer(503, ""), .result(.transient("the token endpoint answered HTTP 503")))
    }

    func testErrorsNameTheirStep() {
        let config = ProviderConfig(id: "api", displayName: "API", flow: .idJag)
        let refused = TokenExchangeProvider.failure(.rejected(error: "invalid_grant", description: "expired"), config, step: .jwtBearer)
        XCTAssertEqual(refused.step, "jwtBearer")
        XCTAssertEqual(refused.code, .loginDenied)
        XCTAssertEqual(refused.serverDescription, "expired")
        XCTAssertEqual(refused.message, "API: the jwt-bearer grant at the API's authorization server was refused (invalid_grant: expired).")
        let target = TokenExchangeProvider.failure(.rejected(error: "invalid_target", description: nil), config, step: .idJag)
        XCTAssertEqual(target.code, .scopeNotGranted)
        XCTAssertEqual(target.step, "idJag")
        let down = TokenExchangeProvider.failure(.transient("the token endpoint answered HTTP 503"), config, step: .tokenExchange)
        XCTAssertEqual(down.code, .authServerUnavailable)
        XCTAssertEqual(down.step, "tokenExchange")
        XCTAssertEqual(down.rpcError.data?["step"], "tokenExchange")
    }

    func testAnIDTokenIsPresentedOnlyWhileValid() {
        func token(exp: Int) -> String {
            "e30." + Base64URLTest.encode(#"{"exp": \#(exp)}"#) + ".sig"
        }
        let now = Date(timeIntervalSince1970: 1_000_000)
        XCTAssertTrue(AuthService.idTokenIsValid(token(exp: 1_000_100), at: now))
        XCTAssertFalse(AuthService.idTokenIsValid(token(exp: 1_000_005), at: now), "too close to expiring for the exchange")
        XCTAssertTrue(AuthService.idTokenIsValid(token(exp: 1_000_005), at: now, margin: 0), "still valid when nothing fresher can be had")
        XCTAssertFalse(AuthService.idTokenIsValid(nil, at: now))
    }
}

private enum Base64URLTest {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
