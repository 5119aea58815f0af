@testable import AuthCore
import Foundation
import JSON
import Wire
import TestSupport
import XCTest

/// A browser login finished by its redirect URL pasted back (the browser could not reach the
/// loopback listener): through `PendingLogins` (the protocol's `completeLogin`) and
/// `RedirectPaste` (the terminal). Only the login's `state` is taken, and only once.
final class PasteBackLoginTests: XCTestCase {
    /// A token endpoint that issues an access token; nothing else answers.
    private static func tokenEndpoint() -> FakeOAuthServer {
        let server = FakeOAuthServer()
        server.answer("/token", FakeOAuthServer.json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 60]))
        return server
    }

    /// A provider of `server`; with `issuer`, its endpoints come from the issuer's discovery document.
    private func provider(_ server: FakeOAuthServer = PasteBackLoginTests.tokenEndpoint(), issuer: String? = nil) -> AuthorizationCodeProvider {
        var config = ProviderConfig(id: "web", displayName: "Web", flow: .authorizationCode)
        config.authorizationEndpoint = "https://id.example.com/authorize"
        config.tokenEndpoint = "https://id.example.com/token"
        config.issuer = issuer
        config.clientId = "cli"
        config.openBrowser = false
        let http = HTTPCalls(transport: server, timeout: 5)
        let oauth = OAuthClient(config: config, http: http, clock: SystemClock(), discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        return AuthorizationCodeProvider(config: config, oauth: oauth, clock: SystemClock(), revokeTimeout: 1, browser: BrowserLauncher(), callbackTimeout: 20)
    }

    /// A login registered in `pending` under `requestId`; returns it, its redirect URI and its state.
    private func startLogin(_ pending: PendingLogins, requestId: JSONValue,
                            provider: AuthorizationCodeProvider? = nil) async throws -> (Task<Bool, Never>, String, String) {
        try await startLogin(pending, requestId: requestId, provider: provider ?? self.provider(), failure: TestBox(nil))
    }

    /// `startLogin`, keeping in `failure` the error the login ends with.
    private func startLogin(_ pending: PendingLogins, requestId: JSONValue, provider: AuthorizationCodeProvider,
                            failure: TestBox<AuthError?>) async throws -> (Task<Bool, Never>, String, String) {
        let prompted = TestBox<String?>(nil)
        let context = LoginContext(prompt: { prompt, _ in if case .browser(let url, _) = prompt { prompted.set(url) } },
                                   acceptPaste: { pending.add(requestId: requestId, door: .host, $0) })
        let login = Task { () -> Bool in
            do throws(AuthError) { _ = try await provider.login(nil, context: context) } catch {
                failure.set(error)
                return false
            }
            return true
        }
        for _ in 0..<200 where prompted.get() == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        let url = try XCTUnwrap(prompted.get().flatMap(URLComponents.init(string:)), "no loginPrompt")
        let item = { (name: String) in url.queryItems?.first { $0.name == name }?.value }
        return (login, try XCTUnwrap(item("redirect_uri")), try XCTUnwrap(item("state")))
    }

    /// Why `pending` refused the URL, nil when a login took it.
    private func rejection(_ pending: PendingLogins, _ requestId: JSONValue, _ url: String) -> PendingLogins.Rejection? {
        do throws(PendingLogins.Rejection) { try pending.complete(requestId: requestId, redirectURL: url) } catch { return error }
        return nil
    }

    func testCompleteLoginTakesTheRightStateOnceAndRefusesTheRest() async throws {
        let pending = PendingLogins()
        let (login, redirect, state) = try await startLogin(pending, requestId: "web")
        let good = "\(redirect)?code=c1&state=\(state)"
        // Refused, and the login keeps waiting: another login's state, a bare code, an unknown request.
        XCTAssertEqual(rejection(pending, "web", "\(redirect)?code=c1&state=forged"), .wrongState)
        XCTAssertEqual(rejection(pending, "web", "c1"), .notARedirect)
        XCTAssertEqual(rejection(pending, "web", "http://127.0.0.1:1/callback?code=c1&state=\(state)"), .notARedirect)
        XCTAssertEqual(rejection(pending, 7, good), .unknownRequest)
        XCTAssertNil(rejection(pending, "web", good))
        let loggedIn = await login.value
        XCTAssertTrue(loggedIn, "the pasted URL finished the login")
        XCTAssertEqual(rejection(pending, "web", good), .used, "a URL is used once")
    }

    /// RFC 9207 holds for a pasted URL as for the browser's: another issuer's `iss`, or none where the
    /// configured issuer promised one, ends the login with 1008 and the code is never exchanged.
    func testAPastedRedirectWithoutTheIssuersIssIsRefused() async throws {
        for iss in ["&iss=https%3A%2F%2Fattacker.example", ""] {
            let server = Self.tokenEndpoint()
            server.answer("/.well-known/openid-configuration", FakeOAuthServer.json(200, [
                "issuer": "https://id.example.com", "authorization_endpoint": "https://id.example.com/authorize",
                "token_endpoint": "https://id.example.com/token", "authorization_response_iss_parameter_supported": true]))
            let pending = PendingLogins()
            let failure = TestBox<AuthError?>(nil)
            let (login, redirect, state) = try await startLogin(pending, requestId: "web",
                                                                provider: provider(server, issuer: "https://id.example.com"), failure: failure)
            XCTAssertNil(rejection(pending, "web", "\(redirect)?code=c1&state=\(state)\(iss)"), "the login takes the URL")
            let loggedIn = await login.value
            XCTAssertFalse(loggedIn, iss)
            XCTAssertEqual(failure.get()?.code, .loginDenied, iss)
            XCTAssertTrue(failure.get()?.message.contains("(RFC 9207)") == true, failure.get()?.message ?? "")
            XCTAssertEqual(server.count("/token"), 0, "the code is not exchanged")
        }
    }

    /// Two connections' logins under the same request id: the state picks the one it belongs to.
    func testTheStatePicksAmongLoginsWithTheSameRequestId() async throws {
        let pending = PendingLogins()
        let (first, _, _) = try await startLogin(pending, requestId: 1)
        let (second, redirect, state) = try await startLogin(pending, requestId: 1)
        XCTAssertNil(rejection(pending, 1, "\(redirect)?code=c2&state=\(state)"))
        let secondLoggedIn = await second.value
        XCTAssertTrue(secondLoggedIn)
        first.cancel()
        let firstLoggedIn = await first.value
        XCTAssertFalse(firstLoggedIn, "the other login still waited (until cancelled)")
    }

    /// The terminal's way in: the same checks, said as a sentence.
    func testTerminalPasteSaysWhyAURLIsNotTaken() async throws {
        let paste = TestBox<RedirectPaste?>(nil)
        let prompted = TestBox<String?>(nil)
        let provider = provider()
        let context = LoginContext(prompt: { prompt, _ in if case .browser(let url, _) = prompt { prompted.set(url) } }, acceptPaste: { paste.set($0) })
        let login = Task { () -> Bool in (try? await provider.login(nil, context: context)) != nil }
        for _ in 0..<200 where prompted.get() == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        let url = try XCTUnwrap(prompted.get().flatMap(URLComponents.init(string:)))
        let redirect = try XCTUnwrap(url.queryItems?.first { $0.name == "redirect_uri" }?.value)
        let state = try XCTUnwrap(url.queryItems?.first { $0.name == "state" }?.value)
        let complete = try XCTUnwrap(paste.get())
        XCTAssertEqual(complete.complete("\(redirect)?code=c&state=other"), PendingLogins.Rejection.wrongState.message)
        XCTAssertNil(complete.complete("  \(redirect.replacingOccurrences(of: "127.0.0.1", with: "localhost"))?code=c&state=\(state) "))
        let loggedIn = await login.value
        XCTAssertTrue(loggedIn)
        XCTAssertEqual(complete.complete("\(redirect)?code=c&state=\(state)"), PendingLogins.Rejection.used.message)
    }

    func testNoBrowserOverSSHWithoutADisplayAndTheDeviceCodeIsPreferred() {
        let env = { (values: [String: String]) in { (name: String) in values[name] } }
        XCTAssertTrue(BrowserLauncher.remoteWithoutDisplay(env(["SSH_CONNECTION": "10.0.0.2 5 10.0.0.1 22"])))
        XCTAssertFalse(BrowserLauncher.remoteWithoutDisplay(env(["SSH_CONNECTION": "10.0.0.2 5 10.0.0.1 22", "DISPLAY": "localhost:10.0"])))
        XCTAssertFalse(BrowserLauncher.remoteWithoutDisplay(env(["SSH_CONNECTION": "x", "WAYLAND_DISPLAY": "wayland-0"])))
        XCTAssertFalse(BrowserLauncher.remoteWithoutDisplay(env([:])))
        var both = ProviderConfig(id: "p", displayName: "P", flow: .authorizationCode)
        both.flows = [.authorizationCode, .deviceCode]
        XCTAssertEqual(both.defaultFlow(remoteWithoutDisplay: false), .authorizationCode)
        XCTAssertEqual(both.defaultFlow(remoteWithoutDisplay: true), .deviceCode)
        XCTAssertEqual(both.interactive(remoteWithoutDisplay: false), "browser")
        XCTAssertEqual(both.interactive(remoteWithoutDisplay: true), "device")
        let browserOnly = ProviderConfig(id: "b", displayName: "B", flow: .authorizationCode)
        XCTAssertEqual(browserOnly.interactive(remoteWithoutDisplay: true), "paste")
        XCTAssertNil(ProviderConfig(id: "c", displayName: "C", flow: .clientCredentials).interactive(remoteWithoutDisplay: true))
    }
}
