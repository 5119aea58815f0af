@testable import AuthCore
import XCTest

/// `ServerChallenge.read`: what each refusal a server can send asks of the agent, without I/O.
final class ServerChallengeTests: XCTestCase {
    private func read(_ status: Int, _ headers: [String: String] = [:], body: String = "",
                      to request: ServerChallenge.Request) -> ServerChallenge {
        ServerChallenge.read(HTTPResponse(status: status, headers: headers, body: Array(body.utf8)), to: request)
    }

    func testAnUnsignedRequestsBearerChallengeSaysWhereToDiscoverTheResource() {
        let metadata = "https://api.example/.well-known/oauth-protected-resource/mcp"
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"Bearer resource_metadata="\#(metadata)", scope="mcp read""#], to: .unsigned),
                       .discover(BearerChallenge(resourceMetadata: metadata, scopes: ["mcp", "read"])))
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"Basic realm="x""#], to: .unsigned), .discover(nil), "a login is wanted, nothing says where")
        XCTAssertEqual(read(401, to: .unsigned), .discover(nil), "no header at all")
        XCTAssertEqual(read(403, ["WWW-Authenticate": #"Bearer error="insufficient_scope""#], to: .unsigned), .none, "no token, no step-up")
    }

    func testA401ToATokenIsARefreshWhateverItsChallenge() {
        for request in [ServerChallenge.Request.token, .provenToken] {
            XCTAssertEqual(read(401, to: request), .refresh, "no header at all")
            XCTAssertEqual(read(401, ["WWW-Authenticate": "Bearer"], to: request), .refresh)
            XCTAssertEqual(read(401, ["WWW-Authenticate": #"Bearer error="invalid_token", error_description="expired""#], to: request), .refresh)
            XCTAssertEqual(read(401, ["WWW-Authenticate": #"DPoP algs="ES256", error="invalid_token""#, "DPoP-Nonce": "n"], to: request), .refresh)
        }
        XCTAssertEqual(read(200, to: .token), .none)
        XCTAssertEqual(read(404, ["WWW-Authenticate": "Bearer"], to: .token), .none)
    }

    func testAResourceAsksAProvenRequestForItsNonce() {
        let challenge = ["WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#, "DPoP-Nonce": "eyJ7S_zG"]
        XCTAssertEqual(read(401, challenge, to: .provenToken), .retryWithNonce("eyJ7S_zG"))
        XCTAssertEqual(read(401, challenge, to: .token), .refresh, "a token that proves nothing: the nonce is not its to answer")
        XCTAssertEqual(read(401, challenge, to: .provenGrant), .retryWithNonce("eyJ7S_zG"))
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#], to: .provenToken), .proofRefused, "no nonce to prove with")
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#, "DPoP-Nonce": ""], to: .provenToken), .proofRefused)
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"DPoP error="invalid_dpop_proof""#, "DPoP-Nonce": "n"], to: .provenToken), .proofRefused,
                       "a refused proof is not a dead token")
        XCTAssertEqual(read(401, ["DPoP-Nonce": "n"], body: #"{"error":"use_dpop_nonce"}"#, to: .provenToken), .retryWithNonce("n"),
                       "without a challenge, the body says it")
    }

    func testATokenEndpointAsksForItsNonceInItsJSONBody() {
        let body = #"{"error":"use_dpop_nonce","error_description":"Authorization server requires nonce in DPoP proof"}"#
        XCTAssertEqual(read(400, ["DPoP-Nonce": "n1", "Cache-Control": "no-store"], body: body, to: .provenGrant), .retryWithNonce("n1"))
        XCTAssertEqual(read(400, body: body, to: .provenGrant), .none, "no nonce: the grant's refusal, for TokenEndpointResult")
        XCTAssertEqual(read(400, ["DPoP-Nonce": "n1"], body: #"{"error":"invalid_dpop_proof"}"#, to: .provenGrant), .none)
        XCTAssertEqual(read(400, ["DPoP-Nonce": "n1"], body: #"{"error":"invalid_grant"}"#, to: .provenGrant), .none)
        XCTAssertEqual(read(401, ["DPoP-Nonce": "n1"], to: .provenGrant), .none, "a token endpoint's 401 is the client's, not a token's")
        XCTAssertEqual(read(500, ["DPoP-Nonce": "n1"], body: body, to: .provenGrant), .none)
        XCTAssertEqual(read(400, ["DPoP-Nonce": "n1"], body: "not json", to: .provenGrant), .none)
    }

    func testA403InsufficientScopeAsksForAStepUp() {
        let header = #"Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="https://api.example/m""#
        XCTAssertEqual(read(403, ["WWW-Authenticate": header], to: .token), .insufficientScope(["mcp", "admin"]))
        XCTAssertEqual(read(403, ["WWW-Authenticate": header], to: .provenToken), .insufficientScope(["mcp", "admin"]))
        XCTAssertEqual(read(403, ["WWW-Authenticate": #"Bearer error="insufficient_scope""#], to: .token), .insufficientScope([]))
        XCTAssertEqual(read(403, ["WWW-Authenticate": #"Bearer error="invalid_token""#], to: .token), .none)
        XCTAssertEqual(read(403, to: .token), .none, "a plain 403 is the API's answer")
        XCTAssertEqual(read(401, ["WWW-Authenticate": header], to: .token), .refresh, "the status decides, not the code alone")
    }

    func testOddCasingQuotingAndSeveralChallengesAreReadByTheRFC9110Grammar() {
        XCTAssertEqual(read(403, ["www-authenticate": #"Negotiate YII==, BEARER Error=insufficient_scope, SCOPE="a\"b c""#], to: .token),
                       .insufficientScope([#"a"b"#, "c"]))
        XCTAssertEqual(read(401, ["WWW-AUTHENTICATE": #"dpop ERROR=use_dpop_nonce"#, "dpop-nonce": "n"], to: .provenToken), .retryWithNonce("n"),
                       "an unquoted code, any case of scheme, parameter and header names")
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"Bearer realm="r", DPoP algs="ES256", error="use_dpop_nonce""#, "DPoP-Nonce": "n"], to: .provenToken),
                       .retryWithNonce("n"), "the DPoP challenge among several")
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"DPoP error_description="x", error="invalid_dpop_proof""#], to: .provenToken), .proofRefused)
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"=,,"==""#], to: .provenToken), .refresh, "garbage is no reason to do more than a 401 asks")
        XCTAssertEqual(read(401, ["WWW-Authenticate": #"Bearer scope="unterminated"#], to: .unsigned), .discover(BearerChallenge()))
    }
}
