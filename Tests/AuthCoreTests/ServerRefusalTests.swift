@testable import AuthCore
import Foundation
import JSON
import Logging
import TestSupport
import XCTest

/// A server's refusal keeps its reason (issue 29 item 13): the `error_description` of every
/// OAuth error the agent reports — authorization redirect, code exchange, device authorization,
/// registration, refresh, password grant — is in the message and in `data.serverDescription`,
/// made safe: control characters escaped, at most 300 characters, never a forged log line.
final class ServerRefusalTests: XCTestCase {
    static let clock = SystemClock()

    private func oauth(_ config: ProviderConfig, _ server: FakeOAuthServer) -> OAuthClient {
        let http = HTTPCalls(transport: server, timeout: 5)
        return OAuthClient(config: config, http: http, clock: Self.clock, discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
    }

    private func webProvider(_ server: FakeOAuthServer) -> AuthorizationCodeProvider {
        var config = ProviderConfig(id: "web", displayName: "Web", flow: .authorizationCode)
        config.authorizationEndpoint = "https://id.example.com/authorize"
        config.tokenEndpoint = "https://id.example.com/token"
        config.clientId = "cli"
        return AuthorizationCodeProvider(config: config, oauth: oauth(config, server), clock: Self.clock, revokeTimeout: 1,
                                         browser: BrowserLauncher(), callbackTimeout: 30)
    }

    /// The error of a browser login whose browser comes back to the agent with `query` (its `state` added).
    private func browserLogin(_ server: FakeOAuthServer, comingBackWith query: String) async throws -> AuthError? {
        let paste = TestBox<RedirectPaste?>(nil)
        let prompted = TestBox<String?>(nil)
        let provider = webProvider(server)
        let context = LoginContext(prompt: { prompt, _ in if case .browser(let url, _) = prompt { prompted.set(url) } }, acceptPaste: { paste.set($0) })
        let login = Task { () -> AuthError? in
            do throws(AuthError) { _ = try await provider.login(nil, context: context) } catch { return error }
            return nil
        }
        for _ in 0..<200 where prompted.get() == nil { try await Task.sleep(nanoseconds: 10_000_000) }
        let url = try XCTUnwrap(prompted.get().flatMap(URLComponents.init(string:)))
        let redirect = try XCTUnwrap(url.queryItems?.first { $0.name == "redirect_uri" }?.value)
        let state = try XCTUnwrap(url.queryItems?.first { $0.name == "state" }?.value)
        XCTAssertNil(try XCTUnwrap(paste.get()).complete("\(redirect)?\(query)&state=\(state)"))
        return await login.value
    }

    /// `error` is `code`, and carries `description` in its message and in `data.serverDescription`.
    private func assertCarries(_ error: AuthError?, _ code: AuthErrorCode, _ description: String,
                               file: StaticString = #filePath, line: UInt = #line) {
        guard let error else { return XCTFail("no error", file: file, line: line) }
        XCTAssertEqual(error.code, code, error.message, file: file, line: line)
        XCTAssertTrue(error.message.contains(description), error.message, file: file, line: line)
        XCTAssertEqual(error.rpcError.data?["serverDescription"], .string(description), file: file, line: line)
    }

    private static func refusal(_ status: Int, _ error: String, _ description: String) -> HTTPResponse {
        FakeOAuthServer.json(status, ["error": .string(error), "error_description": .string(description)])
    }

    func testAnAuthorizationRedirectsErrorDescriptionIsKept() async throws {
        let error = try await browserLogin(FakeOAuthServer(),
                                           comingBackWith: "error=invalid_request&error_description=Pushed+Authorization+Request+must+be+used")
        assertCarries(error, .loginDenied, "Pushed Authorization Request must be used")
        XCTAssertEqual(error?.message, "The Web login was denied (invalid_request: Pushed Authorization Request must be used).")
    }

    func testTheCodeExchangesRefusalIsKept() async throws {
        let server = FakeOAuthServer()
        server.answer("/token", Self.refusal(400, "invalid_grant", "authorization code expired"))
        let error = try await browserLogin(server, comingBackWith: "code=c")
        assertCarries(error, .loginDenied, "authorization code expired")
    }

    func testADeviceAuthorizationRefusalIsKept() async throws {
        var config = ProviderConfig(id: "dev", displayName: "Dev", flow: .deviceCode)
        config.deviceAuthorizationEndpoint = "https://id.example.com/device"
        config.tokenEndpoint = "https://id.example.com/token"
        config.clientId = "cli"
        let server = FakeOAuthServer()
        server.answer("/device", Self.refusal(400, "unauthorized_client", "device_code is not allowed for this client"))
        let provider = DeviceCodeProvider(config: config, oauth: oauth(config, server), clock: Self.clock, revokeTimeout: 1, browser: BrowserLauncher())
        do {
            _ = try await provider.login(nil, context: LoginContext())
            XCTFail("logged in")
        } catch {
            // unauthorized_client: the configured client may not use this grant, a configuration mistake (1016, key flow).
            assertCarries(error, .configurationInvalid, "device_code is not allowed for this client")
            XCTAssertEqual((error as? AuthError)?.configKey, "flow")
        }
    }

    func testARegistrationRefusalIsKept() async throws {
        let server = FakeOAuthServer()
        server.answer("/register", Self.refusal(400, "invalid_client_metadata", "scope admin is not in scopes_supported"))
        let registration = ClientRegistration(http: HTTPCalls(transport: server, timeout: 5))
        let authorizationServer = AuthorizationServer(issuer: "https://as.example", tokenEndpoint: "https://as.example/token",
                                                      registrationEndpoint: "https://as.example/register", sendsIss: false,
                                                      acceptsClientMetadataDocuments: false)
        do {
            _ = try await registration.register(at: authorizationServer, scopes: ["admin"], redirectPort: 1)
            XCTFail("registered")
        } catch {
            assertCarries(error, .discoveryFailed, "scope admin is not in scopes_supported")
            XCTAssertEqual(error.step, "registration")
        }
    }

    /// A password login and a refresh, against a token endpoint that answers with `answers` in turn.
    private func service(_ answers: [HTTPResponse], log: TestBox<[String]> = TestBox([])) -> AuthService {
        let server = FakeOAuthServer()
        answers.forEach { server.answer("/token", $0) }
        let corp = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: .password, origins: [Origin(url: "https://corp.example.com")!],
                                  tokenEndpoint: "https://id.example.com/token", clientId: "cli")
        return AuthService(config: AgentConfig(store: .memory, providers: [corp]), store: MemorySessionStore(), transport: server,
                           logger: Logger(level: .debug, sink: { line in log.update { $0.append(line) } }), events: { _ in })
    }

    private static let tokens = FakeOAuthServer.json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt"])

    func testAPasswordRefusalIsKept() async throws {
        let service = service([Self.refusal(400, "invalid_grant", "account locked after 5 failed attempts")])
        do {
            _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
            XCTFail("logged in")
        } catch {
            assertCarries(error, .invalidCredentials, "account locked after 5 failed attempts")
        }
    }

    func testARefreshRefusalIsKept() async throws {
        let service = service([Self.tokens, Self.refusal(400, "invalid_grant", "refresh token revoked by an administrator")])
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        do {
            _ = try await service.refresh(provider: "corp", failedAuthorization: "Bearer at")
            XCTFail("refreshed")
        } catch {
            assertCarries(error, .sessionExpired, "refresh token revoked by an administrator")
        }
    }

    /// The server chose the text: newlines and escapes cannot start a log line or a terminal
    /// sequence, and a long one is cut at 300 characters, in the message, the data and the log.
    func testADescriptionIsEscapedAndBounded() async throws {
        let forged = "bad token\n2026-11-28T00:00:00Z error logged in as admin\r\u{1B}[2J\u{2028}é" + String(repeating: "x", count: 500)
        let log = TestBox<[String]>([])
        let service = service([Self.tokens, Self.refusal(400, "invalid_grant", forged)], log: log)
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "pw"))
        do {
            _ = try await service.refresh(provider: "corp", failedAuthorization: "Bearer at")
            XCTFail("refreshed")
        } catch {
            let description = try XCTUnwrap(error.rpcError.data?["serverDescription"]?.stringValue)
            XCTAssertEqual(description.count, 300)
            XCTAssertTrue(description.hasPrefix(#"bad token\n2026-11-28T00:00:00Z error logged in as admin\r\u{1B}[2J\u{2028}éxxx"#), description)
            XCTAssertTrue(description.hasSuffix("x…"), description)
            XCTAssertTrue(error.message.contains(description), error.message)
            for text in [description, error.message] + log.get() {
                XCTAssertFalse(text.unicodeScalars.contains { $0.properties.generalCategory == .control || $0 == "\u{2028}" }, text)
            }
        }
    }
}
