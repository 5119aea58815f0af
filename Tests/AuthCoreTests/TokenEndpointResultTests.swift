import XCTest
@testable import AuthCore

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
            (#"{"access_token":"AT","expires_in":null,"extra":{"x":1}}"#, TokenResponse(accessToken: "AT")),
            (#"{"access_token":"a-._~+/=!#$%&'*^`|AZaz09"}"#, TokenResponse(accessToken: "a-._~+/=!#$%&'*^`|AZaz09")),
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
            (408, ""), (429, #"{"error":"slow_down"}"#),
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

    /// Issue 10 item 10: an `expires_in` that cannot be a lifetime is not "never expires" but one hour, with the reason kept for a warning.
    func testUnusableExpiresInBecomesTheDefaultLifetime() {
        for value in [#""soon""#, "-3", "-1", "1e308", "9223372036854775807", "2147483648", "true", #"{"s":1}"#, #""-5""#, #""""#] {
            let body = #"{"access_token":"AT","refresh_token":"","expires_in":"# + value + "}"
            guard case .success(let token) = TokenEndpointResult.classify(response(200, body)) else {
                XCTFail("\(body) should succeed")
                continue
            }
            XCTAssertEqual(token.expiresIn, TokenResponse.defaultLifetime, body)
            XCTAssertEqual(TokenResponse.defaultLifetime, 3600)
            XCTAssertNotNil(token.expiresInProblem, body)
        }
        XCTAssertNil(TokenEndpointResult.classify(response(200, #"{"access_token":"AT","expires_in":null}"#)).token?.expiresInProblem)
        XCTAssertEqual(TokenEndpointResult.classify(response(200, #"{"access_token":"AT","expires_in":"2147483647"}"#)).token?.expiresIn,
                       2147483647)
    }

    /// Issue 10 items 9 and 10: a success status without a usable token response is `malformed` (not transient),
    /// names the problem, and never quotes the body.
    func testMalformed() {
        let cases: [(String, String)] = [
            ("not json SECRET", "not valid JSON"), (#"{"token":"SECRET"}"#, "no access_token"),
            (#"{"access_token":5}"#, "access_token is a number"), (#"{"access_token":""}"#, "access_token is empty"),
            (#"["SECRET"]"#, "not an object"),
            (#"{"access_token":"SECRET","access_token":"SECRET2"}"#, "duplicate key"),
            (#"{"access_token":"SECRET","expires_in":99999999999999999999}"#, "64 bits"),
            (#"{"access_token":"SECRET","n":{"deep":[1,{"x":1,"x":2}]}}"#, "duplicate key"),
            (#"{"access_token":"a\r\nX-Evil: 1"}"#, "Authorization header"), (#"{"access_token":"a\u0000b"}"#, "Authorization header"),
            (#"{"access_token":"SECRET part"}"#, "Authorization header"), (#"{"access_token":"SECRET\t"}"#, "Authorization header"),
            (#"{"access_token":"SECRÉT"}"#, "Authorization header"), (#"{"access_token":"SECRET\u007f"}"#, "Authorization header"),
            (#"{"access_token":"ok","refresh_token":"r\n"}"#, "refresh_token"),
            (#"{"access_token":"ok","token_type":"Bearer\n"}"#, "token_type"), (#"{"access_token":"ok","token_type":"Bearer x"}"#, "token_type"),
        ]
        for (body, problem) in cases {
            guard case .malformed(let message) = TokenEndpointResult.classify(response(200, body)) else {
                XCTFail("\(body) should be malformed, got \(TokenEndpointResult.classify(response(200, body)))")
                continue
            }
            XCTAssertTrue(message.contains(problem), "\(message) should name \(problem)")
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

private extension TokenEndpointResult {
    var token: TokenResponse? {
        if case .success(let token) = self { return token }
        return nil
    }
}

extension TokenEndpointResultTests {
    /// The server's words reach messages and logs, but only as one line of at most 300 characters,
    /// its control characters escaped.
    func testRejectionTextKeepsTheDescriptionOnOneLineAndShort() {
        XCTAssertEqual(ServerRefusal(error: "invalid_grant", description: nil).line, "invalid_grant")
        XCTAssertEqual(ServerRefusal(error: "invalid_grant", description: "").line, "invalid_grant")
        XCTAssertEqual(ServerRefusal(error: "invalid_grant", description: "token reused").line, "invalid_grant: token reused")
        XCTAssertEqual(ServerRefusal(error: "e", description: "a\r\nb\u{1B}[31mc\u{7F}é\u{202E}").line, #"e: a\r\nb\u{1B}[31mc\u{7F}é\u{202E}"#)
        XCTAssertEqual(ServerRefusal(error: "e", description: String(repeating: "x", count: 500)).description?.count, 300)
        XCTAssertEqual(ServerRefusal(error: String(repeating: "e", count: 100), description: nil).error.count, 64)
    }
}
