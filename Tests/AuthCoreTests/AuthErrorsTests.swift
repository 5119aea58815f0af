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

    func testLoginTexts() {
        let p = Self.corp
        check(.loginDenied(p, .denied(error: nil)), .loginDenied, "The Corp SSO login was denied.")
        check(.loginDenied(p, .denied(error: "access_denied")), .loginDenied, "The Corp SSO login was denied (access_denied).")
        check(.loginDenied(p, .noAuthorizationCode), .loginDenied, "The Corp SSO login returned no authorization code.")
        check(.loginDenied(p, .codeRefused("invalid_grant")), .loginDenied, "Corp SSO refused the authorization code (invalid_grant).")
        check(.loginDenied(p, .deviceLoginRefused("invalid_grant")), .loginDenied, "Corp SSO refused the device login (invalid_grant).")
        check(.loginDenied(p, .deviceLoginNotStarted("HTTP 400")), .loginDenied, "Corp SSO refused to start a device login (HTTP 400).")
        check(.loginDenied(p, .refused("the nonce differs")), .loginDenied, "The Corp SSO login was refused: the nonce differs.")
        check(.loginDenied(p, .unsafeURL(what: "authorization URL", problem: "not https")), .loginDenied,
              "The Corp SSO login was refused: the authorization URL cannot be opened safely (not https).")
        check(.issuerUnusable("http://idp", "not https"), .loginDenied, "The issuer http://idp cannot be used: not https.", provider: nil)
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
