import XCTest
import AuthCore

final class TokenEndpointResultTests: XCTestCase {
    private func response(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: Array(body.utf8))
    }

    func testSuccess() {
        let full = #"{"access_token":"AT","token_type":"bearer","expires_in":3600,"refresh_token":"RT","id_token":"IT","scope":"a b"}"#
        XCTAssertEqual(TokenEndpointResult.classify(response(200, full)),
                       .success(TokenResponse(accessToken: "AT", tokenType: "Bearer", expiresIn: 3600, refreshToken: "RT",
                                              idToken: "IT", scope: "a b")))
        let cases: [(String, TokenResponse)] = [
            (#"{"access_token":"AT"}"#, TokenResponse(accessToken: "AT")),
            (#"{"access_token":"AT","token_type":"BEARER","expires_in":"120"}"#, TokenResponse(accessToken: "AT", expiresIn: 120)),
            (#"{"access_token":"AT","token_type":"DPoP","expires_in":59.9}"#,
             TokenResponse(accessToken: "AT", tokenType: "DPoP", expiresIn: 59)),
            (#"{"access_token":"AT","expires_in":"soon","refresh_token":""}"#, TokenResponse(accessToken: "AT")),
            (#"{"access_token":"AT","expires_in":-3}"#, TokenResponse(accessToken: "AT")),
            (#"{"access_token":"AT","expires_in":null,"extra":{"x":1}}"#, TokenResponse(accessToken: "AT")),
        ]
        for (body, expected) in cases {
            XCTAssertEqual(TokenEndpointResult.classify(response(200, body)), .success(expected), body)
        }
        XCTAssertEqual(TokenResponse.classify(response(201, #"{"access_token":"AT"}"#)), .success(TokenResponse(accessToken: "AT")))
    }

    func testRejected() {
        let cases: [(Int, String, String, String?)] = [
            (400, #"{"error":"invalid_grant","error_description":"expired"}"#, "invalid_grant", "expired"),
            (401, #"{"error":"invalid_client"}"#, "invalid_client", nil),
            (400, #"{"error":"authorization_pending","error_description":5}"#, "authorization_pending", nil),
            (200, #"{"error":"bad_verification_code"}"#, "bad_verification_code", nil),
            (400, "<html>Bad Request</html>", "http_400", nil),
            (401, "", "http_401", nil),
            (400, #"{"error":7}"#, "http_400", nil),
            (403, #"{"message":"forbidden"}"#, "http_403", nil),
            (404, "", "http_404", nil),
        ]
        for (status, body, error, description) in cases {
            XCTAssertEqual(TokenEndpointResult.classify(response(status, body)), .rejected(error: error, description: description),
                           "\(status) \(body)")
        }
    }

    func testTransient() {
        let cases: [(Int, String)] = [
            (200, "not json SECRET"), (200, #"{"token":"SECRET"}"#), (200, #"{"access_token":5}"#),
            (200, #"{"access_token":""}"#), (200, #"["SECRET"]"#), (200, #"{"access_token":"a\r\nX-Evil: 1"}"#),
            (200, #"{"access_token":"ok","refresh_token":"r\n"}"#), (200, #"{"access_token":"ok","token_type":"Bearer\n"}"#), (408, ""), (429, #"{"error":"slow_down"}"#),
            (500, #"{"error":"server_error"}"#), (502, "<html>"), (503, ""), (302, ""), (100, ""),
        ]
        for (status, body) in cases {
            guard case .transient(let message) = TokenEndpointResult.classify(response(status, body)) else {
                XCTFail("\(status) \(body) should be transient")
                continue
            }
            XCTAssertTrue(message.contains(String(status)), message)
            XCTAssertFalse(message.contains("SECRET"), message)
        }
    }

    func testDescriptionHidesTokens() {
        let token = TokenResponse(accessToken: "AT-SECRET", refreshToken: "RT-SECRET", idToken: "ID-SECRET")
        var dumped = ""
        dump(token, to: &dumped)
        for text in [String(describing: token), String(reflecting: token), dumped,
                     String(describing: TokenEndpointResult.success(token))] {
            XCTAssertFalse(text.contains("SECRET"), text)
        }
    }
}
