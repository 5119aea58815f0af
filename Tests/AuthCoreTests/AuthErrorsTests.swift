@testable import AuthCore
import XCTest

/// Issue 21 item 2: every error is built by a named constructor, one place per code's
/// wording. These pin the texts that no transcript or suite shows, byte for byte as the
/// call sites wrote them before the constructors existed, with their codes and providers.
final class AuthErrorsTests: XCTestCase {
    static let corp = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: .password, clientId: "cli")

    private func check(_ error: AuthError, _ code: AuthErrorCode, _ message: String, provider: String? = "corp",
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(error, AuthError(code, message, provider: provider), file: file, line: line)
    }

    /// Interpolated into a log line or another message, an error is its sentence, not a Swift value
    /// dump (issue 36 item 4: `the server's GET stream could not be opened: AuthError(code: …)`).
    func testAnErrorReadsAsItsSentence() {
        let error = AuthError.requestFailed(.mcpNotCompleted("http://127.0.0.1:9/mcp could not be reached"))
        let line = "mcp: the server's GET stream could not be opened: \(error)"
        XCTAssertEqual(line, "mcp: the server's GET stream could not be opened: " + error.message)
        XCTAssertFalse(line.contains("AuthError(") || line.contains("Optional("), line)
    }

    func testLoginTexts() {
        let p = Self.corp
        check(.loginDenied(p, .denied(nil)), .loginDenied, "The Corp SSO login was denied.")
        check(.loginDenied(p, .denied(ServerRefusal(error: "access_denied", description: nil))), .loginDenied, "The Corp SSO login was denied (access_denied).")
        check(.loginDenied(p, .noAuthorizationCode), .loginDenied, "The Corp SSO login returned no authorization code.")
        check(.loginDenied(p, .codeRefused(ServerRefusal(error: "invalid_grant", description: nil))), .loginDenied, "Corp SSO refused the authorization code (invalid_grant).")
        check(.loginDenied(p, .deviceLoginRefused(ServerRefusal(error: "invalid_grant", description: nil))), .loginDenied, "Corp SSO refused the device login (invalid_grant).")
        check(.loginDenied(p, .deviceLoginNotStarted(ServerRefusal(error: "HTTP 400", description: nil))), .loginDenied, "Corp SSO refused to start a device login (HTTP 400).")
        check(.loginDenied(p, .refused("the nonce differs")), .loginDenied, "The Corp SSO login was refused: the nonce differs.")
        check(.loginDenied(p, .unsafeURL(what: "authorization URL", problem: "not https")), .loginDenied,
              "The Corp SSO login was refused: the authorization URL cannot be opened safely (not https).")
        let unusable = AuthError.issuerUnusable("http://idp", "not https")
        XCTAssertEqual([unusable.code.reason, unusable.message, unusable.configKey], ["configurationInvalid", "The issuer http://idp cannot be used: not https.", "issuer"])
        check(.loginFailed(CancellationError()), .loginDenied, "The login failed: CancellationError()", provider: nil)
        check(.noLoginThread(), .loginDenied, "no thread for the login", provider: nil)
        check(.noLoginThread(provider: "corp"), .loginDenied, "no thread for the login")
        check(.loginTimedOut(p, .browserRedirect), .loginTimedOut, "The Corp SSO login did not come back from the browser in time.")
        check(.loginTimedOut(p, .deviceApproval), .loginTimedOut, "The Corp SSO login was not approved in time.")
        check(.invalidCredentials(p, .passwordRejected), .invalidCredentials, "Corp SSO rejected the username or password.")
        check(.invalidCredentials(p, .clientCredentialsRejected), .invalidCredentials, "Corp SSO rejected the client credentials.")
        check(.invalidCredentials(p, .tokenNotAccepted), .invalidCredentials, "Corp SSO did not accept the token.")
        check(.sessionExpired(p), .sessionExpired, "The Corp SSO session has expired; log in again.")
        check(.mcpLoginUncovered("https://mcp.example.com/mcp"), .notLoggedIn,
              "The MCP server wants a login (HTTP 401) and no provider covers https://mcp.example.com", provider: nil)
        check(.uncoveredFetch("https://api.example.com/x"), .originNotAllowed,
              "No provider served here covers https://api.example.com; this socket fetches only URLs its providers cover.", provider: nil)
    }

    /// Issue 29: a session of another issuer, an RFC 9207 mismatch, and a server's refusal in its own words.
    func testIssuerAndServerRefusalTexts() {
        var p = Self.corp
        p.issuer = "https://sso.example.com"
        check(.sessionOfAnotherIssuer(p, account: "alice", issuedBy: "https://old.example.com"), .notLoggedIn,
              "Account alice is not logged in to Corp SSO: the session was issued by https://old.example.com; "
              + "the configuration now names https://sso.example.com: log in again.")
        check(.issuerMismatch(p, "the authorization response names the issuer https://x, not https://sso.example.com"), .loginDenied,
              "The Corp SSO login was refused: the authorization response names the issuer https://x, not https://sso.example.com (RFC 9207).")
        let said = ServerRefusal(error: "invalid_grant", description: "token revoked")
        let cases: [(AuthError, String)] = [
            (.sessionExpired(p, refusal: said), "The Corp SSO session has expired (invalid_grant: token revoked); log in again."),
            (.invalidCredentials(p, .passwordRejected, refusal: said), "Corp SSO rejected the username or password (invalid_grant: token revoked)."),
            (.loginDenied(p, .denied(said)), "The Corp SSO login was denied (invalid_grant: token revoked)."),
            (.scopeNotGranted(p, .none, refused: said), "Corp SSO did not grant the requested scopes, audience or resource (invalid_grant: token revoked)."),
            (.registrationRefused(issuer: "https://sso.example.com", status: 400, said),
             "https://sso.example.com refused the registration with HTTP 400 (invalid_grant: token revoked)."),
        ]
        for (error, message) in cases {
            XCTAssertEqual(error.message, message)
            XCTAssertEqual(error.rpcError.data?["serverDescription"], "token revoked", message)
        }
        let bare = AuthError.sessionExpired(p, refusal: ServerRefusal(error: "invalid_grant", description: nil))
        XCTAssertEqual(bare, AuthError(.sessionExpired, "The Corp SSO session has expired; log in again.", provider: "corp"), "no description, nothing added")
        XCTAssertNil(bare.rpcError.data?["serverDescription"])
    }

    func testServerAndStoreTexts() {
        let p = Self.corp
        check(.unavailable(p), .authServerUnavailable, "Corp SSO is unavailable.")
        check(.noLoginEndpoint(p), .authServerUnavailable, "Corp SSO has no login endpoint.")
        check(.anotherAgentBusy(p), .authServerUnavailable, "Another auth-agent is busy with Corp SSO; try again.")
        check(.loginLockUnavailable("corp", CancellationError()), .authServerUnavailable, "cannot lock the store for the login: CancellationError()")
        check(.endpointsNotDiscovered("https://idp", .noDocument("https://idp/x answered HTTP 500")), .authServerUnavailable,
              "Cannot discover the endpoints of https://idp: https://idp/x answered HTTP 500.", provider: nil)
        check(.endpointsNotDiscovered("https://idp", .noDocument("x")).about("corp"), .authServerUnavailable,
              "Cannot discover the endpoints of https://idp: x.")
        check(.keyringUnavailable(p, "locked"), .storeUnavailable, "The keyring holding the Corp SSO session is unavailable: locked.")
        check(.excessiveRefresh(p, account: "ann", .token), .excessiveRefresh,
              "Corp SSO was refreshed 5 times within 30 s; not calling the server again yet.")
        check(.requestFailed(.cannotBeSent("bad URL")), .requestFailed, "The request cannot be sent: bad URL.", provider: nil)
        check(.requestFailed(.notSent("no key")), .requestFailed, "The request was not sent: no key.", provider: nil)
        check(.requestFailed(.mcpNotCompleted("timed out")), .requestFailed, "The MCP request was not completed: timed out.", provider: nil)
        check(.requestFailed(.tooManyRedirects), .requestFailed, "The request was redirected more than \(FetchRequest.maxRedirects) times.", provider: nil)
        check(.mcpScopeNotGranted(["read", "write"]), .scopeNotGranted,
              "The MCP server wants the scope read write (HTTP 403 insufficient_scope), which the login cannot ask for or was not granted", provider: nil)
        check(.relayed(.loginDenied, "refused", provider: "corp"), .loginDenied, "refused")
    }
}
