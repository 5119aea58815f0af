@testable import AuthCore
import Foundation
import JSON
import TestSupport
import Wire
import XCTest

/// The rest of issue 31's "Done when" for the profiles' fakes (`ProviderProfileFlowTests` has the
/// fakes and their pages): Okta's, Auth0's and Keycloak's device logins, a shaped token at every
/// profile that can shape one, and Keycloak's offline tokens.
extension ProviderProfileFlowTests {
    private func deviceRequest(_ fake: IdentityProviderFake, _ path: String) throws -> [String: String] {
        let request = try XCTUnwrap(fake.server.requests.first { URL(string: $0.url)?.path == path }, "the device authorization request")
        return FormEncoding.uniqueParameters(request.body ?? []) ?? [:]
    }

    // MARK: Okta

    /// Okta's device flow ("Configure Device Authorization Grant Flow"): the authorization server's own
    /// `/v1/device/authorize`, with `offline_access` so the login brings a refresh token; then a token
    /// of other scopes from the same authorization server (its audience is the server's).
    func testOktaDeviceLoginRefreshesShapesByScopeAndLogsOut() async throws {
        let fake = Self.okta()
        let service = try service(#"{"id": "okta", "flow": "deviceCode", "issuer": "\#(Self.oktaIssuer)", "clientId": "0oa", "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "okta", credentials: nil, context: fake.person)
        XCTAssertEqual(try deviceRequest(fake, "/oauth2/default/v1/device/authorize")["scope"], "openid profile offline_access")
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "urn:ietf:params:oauth:grant-type:device_code")
        _ = try await service.refresh(provider: "okta", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token", "offline_access brought a refresh token")

        let shaped = try await service.token(provider: "okta", shape: TokenShape(scopes: ["openid", "orders:read"]))
        XCTAssertEqual(fake.tokenRequests.last?["scope"], "openid orders:read")
        XCTAssertNil(fake.tokenRequests.last?["audience"])
        let plain = try await service.token(provider: "okta")
        XCTAssertNotEqual(shaped.accessToken, plain.accessToken, "the shaped token is another token")
        let revoked = try await service.logout(provider: "okta")
        XCTAssertTrue(revoked)
        XCTAssertEqual(accounts(service), 0)
    }

    // MARK: Auth0

    func testAuth0DeviceLoginRefreshesAndLogsOut() async throws {
        let fake = Self.auth0()
        let service = try service(#"{"id": "a0", "profile": "auth0", "flow": "deviceCode", "issuer": "https://acme.auth0.com/", "clientId": "c", "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "a0", credentials: nil, context: fake.person)
        XCTAssertEqual(try deviceRequest(fake, "/oauth/device/code")["scope"], "openid profile offline_access")
        _ = try await service.refresh(provider: "a0", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token")
        let revoked = try await service.logout(provider: "a0")
        XCTAssertTrue(revoked)
    }

    // MARK: Keycloak

    /// Keycloak's device flow, then a token for another API of the realm: Keycloak has no `audience`
    /// parameter — an audience comes with a client scope that maps it (its "audience mappers"), so the
    /// shaped token asks for that scope on the refresh grant, which rotates the refresh token.
    func testKeycloakDeviceLoginRefreshesShapesByClientScopeAndLogsOut() async throws {
        let fake = Self.keycloak()
        let service = try service(#"{"id": "kc", "flow": "deviceCode", "issuer": "\#(Self.keycloakIssuer)", "clientId": "cli", "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "kc", credentials: nil, context: fake.person)
        XCTAssertEqual(try deviceRequest(fake, "/realms/dev/protocol/openid-connect/auth/device")["scope"], "openid profile")
        _ = try await service.refresh(provider: "kc", failedAuthorization: nil)
        _ = try await service.token(provider: "kc", shape: TokenShape(scopes: ["openid", "orders"]))
        let shaped = try XCTUnwrap(fake.tokenRequests.last)
        XCTAssertEqual(shaped["grant_type"], "refresh_token")
        XCTAssertEqual(shaped["scope"], "openid orders")
        XCTAssertEqual(fake.tokenRequests.suffix(2).map { $0["refresh_token"] }, ["rt-1", "rt-2"], "the refresh and the shaped token each spend the last rotated token")
        let revoked = try await service.logout(provider: "kc")
        XCTAssertTrue(revoked)
    }

    /// Keycloak's offline tokens (`offline_access` asked for by the configuration) say
    /// `refresh_expires_in: 0`: no fixed expiry, not "expired" — the agent keeps using the token and
    /// refreshes with it. When the offline session has been idle too long Keycloak answers
    /// `invalid_grant` "Offline session not active": a new login, and the dead session is gone.
    func testKeycloakOfflineTokensWithZeroRefreshExpiryRefreshUntilTheServerEndsThem() async throws {
        let fake = Self.keycloak()
        let service = try service(#"{"id": "kc", "issuer": "\#(Self.keycloakIssuer)", "clientId": "cli", "scopes": ["openid", "offline_access"], "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "kc", credentials: nil, context: fake.person)
        XCTAssertEqual(service.status().first?.accounts.count, 1, "logged in with refresh_expires_in: 0")
        let sent = fake.tokenRequests.count
        let served = try await service.token(provider: "kc")
        XCTAssertEqual(served.accessToken, "at-1", "the token is served as it is")
        XCTAssertEqual(fake.tokenRequests.count, sent)
        _ = try await service.refresh(provider: "kc", failedAuthorization: nil)
        _ = try await service.refresh(provider: "kc", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.suffix(2).map { $0["grant_type"] }, ["refresh_token", "refresh_token"], "the offline token refreshes")

        fake.refuseRefreshes()
        do {
            _ = try await service.refresh(provider: "kc", failedAuthorization: nil)
            XCTFail("refreshed an ended offline session")
        } catch {
            XCTAssertTrue(error.message.contains("Offline session not active"), error.message)
        }
        XCTAssertEqual(accounts(service), 0, "the ended offline session is not kept")
    }

    // MARK: Shaped tokens at Google and GitLab

    /// Google takes a narrower `scope` on the refresh grant (https://developers.google.com/identity/protocols/oauth2/native-app#offline).
    func testGoogleShapesATokenByScope() async throws {
        let fake = Self.google()
        let service = try service(#"{"id": "g", "issuer": "https://accounts.google.com", "clientId": "x.apps.googleusercontent.com", "clientSecret": "GOCSPX-s", "origins": ["https://www.googleapis.com"]}"#, fake)
        _ = try await service.login(provider: "g", credentials: nil, context: fake.person)
        _ = try await service.token(provider: "g", shape: TokenShape(scopes: ["email"]))
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token")
        XCTAssertEqual(fake.tokenRequests.last?["scope"], "email")
    }

    func testGitLabShapesATokenByScope() async throws {
        let fake = Self.gitlab()
        let service = try service(#"{"id": "gl", "issuer": "https://gitlab.com", "clientId": "app", "origins": ["https://gitlab.com"]}"#, fake)
        _ = try await service.login(provider: "gl", credentials: nil, context: fake.person)
        _ = try await service.token(provider: "gl", shape: TokenShape(scopes: ["read_repository"]))
        XCTAssertEqual(fake.tokenRequests.last?["scope"], "read_repository")
        _ = try await service.logout(provider: "gl")
        XCTAssertEqual(accounts(service), 0)
    }
}

extension ProviderProfileFlowTests {
    /// GitHub's tokens carry the scopes (OAuth app) or permissions (GitHub app) the app was given:
    /// its token endpoint takes no `scope` on a refresh and an OAuth app has no refresh token to
    /// shape from. A shaped token is refused before any request.
    func testGitHubCannotShapeATokenAndSaysSo() async throws {
        for app in [false, true] {
            let fake = Self.github(app: app)
            let service = try service(#"{"id": "gh", "profile": "github", "clientId": "Ov23li", "origins": ["https://api.github.com"]}"#, fake)
            _ = try await service.login(provider: "gh", credentials: nil, context: fake.person)
            let sent = fake.tokenRequests.count
            do {
                let token = try await service.token(provider: "gh", shape: TokenShape(scopes: ["read:org"]))
                XCTFail("app \(app): shaped \(token.accessToken); sent \(fake.tokenRequests.suffix(1))")
            } catch {
                XCTAssertEqual(error.code, .scopeNotGranted, "app \(app): \(error.message)")
                // An OAuth app has no refresh token: refused as any session without one is.
                XCTAssertTrue(error.message.contains(app ? "GitHub's tokens carry what the app was granted" : "cannot ask for tokens of other scopes"), error.message)
            }
            XCTAssertEqual(fake.tokenRequests.count, sent, "app \(app)")
        }
    }
}
