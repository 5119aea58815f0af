@testable import AuthCore
import Foundation
import XCTest

/// Issue 9 item 5: what a token endpoint's answer means to a login and to a
/// refresh, decided in one place for every flow (AppAuth's split: an OAuth error
/// means the grant is dead, a failing server is transient, an unusable answer
/// keeps the session).
final class TokenEndpointOutcomeTests: XCTestCase {
    static let provider = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: .password, clientId: "cli")
    static let token = TokenResponse(accessToken: "AT2", expiresIn: 60, refreshToken: "RT2")
    static let renewed = Session(accessToken: "AT2", refreshToken: "RT2", obtainedAt: Date(timeIntervalSince1970: 0))

    /// The flow's refusal, built from the server's words (made safe).
    private static func refused(_ server: ServerRefusal) -> AuthError { refused(server.line) }
    private static func refused(_ why: String) -> AuthError { AuthError(.loginDenied, "refused (\(why))", provider: "corp") }

    func testLoginTable() {
        let cases: [(TokenEndpointResult, Result<TokenResponse, AuthError>)] = [
            (.success(Self.token), .success(Self.token)),
            (.rejected(error: "invalid_grant", description: "code expired"), .failure(Self.refused("invalid_grant: code expired"))),
            (.rejected(error: "invalid_client", description: nil), .failure(Self.refused("invalid_client"))),
            (.rejected(error: "invalid_scope", description: "no"), .failure(Self.refused("invalid_scope: no"))),
            (.rejected(error: "http_401", description: nil), .failure(Self.refused("http_401"))),
            (.rejected(error: "access_denied", description: "bad\r\nX-Injected: 1\u{7}"), .failure(Self.refused(#"access_denied: bad\r\nX-Injected: 1\u{7}"#))),
            (.transient("idp.example.com did not answer in time"),
             .failure(AuthError(.authServerUnavailable, "Corp SSO is unavailable: idp.example.com did not answer in time.", provider: "corp"))),
            (.malformed("the token endpoint's HTTP 200 answer is not valid JSON"),
             .failure(AuthError(.loginDenied, "Corp SSO sent an unusable answer: the token endpoint's HTTP 200 answer is not valid JSON.", provider: "corp"))),
        ]
        for (result, expected) in cases {
            let got: Result<TokenResponse, AuthError>
            do { got = .success(try result.loginTokens(Self.provider, refused: Self.refused)) } catch { got = .failure(error) }
            XCTAssertEqual(got, expected, "\(result)")
        }
    }

    func testRefreshTable() {
        let cases: [(TokenEndpointResult, RefreshOutcome)] = [
            (.success(Self.token), .refreshed(Self.renewed)),
            (.rejected(error: "invalid_scope", description: "write is not allowed"), .notGranted(ServerRefusal(error: "invalid_scope", description: "write is not allowed"))),
            (.rejected(error: "invalid_target", description: nil), .notGranted(ServerRefusal(error: "invalid_target", description: nil))),
            (.rejected(error: "invalid_grant", description: "token reused"), .rejected(ServerRefusal(error: "invalid_grant", description: "token reused"))),
            (.rejected(error: "invalid_client", description: nil), .rejected(ServerRefusal(error: "invalid_client", description: nil))),
            (.rejected(error: "http_400", description: nil), .rejected(ServerRefusal(error: "http_400", description: nil))),
            (.rejected(error: "unauthorized_client", description: String(repeating: "x", count: 400)),
             .rejected(ServerRefusal(error: "unauthorized_client", description: String(repeating: "x", count: 299) + "…"))),
            (.transient("the token endpoint answered HTTP 503"), .transient("the token endpoint answered HTTP 503")),
            (.malformed("its access_token is empty"), .malformed("its access_token is empty")),
        ]
        for (result, expected) in cases {
            let got = result.refreshOutcome { token in
                XCTAssertEqual(token, Self.token)
                return Self.renewed
            }
            XCTAssertEqual(got, expected, "\(result)")
        }
    }
}
