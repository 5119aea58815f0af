@testable import AuthCore
import Foundation
import JSON
import Logging
import TestSupport
import Wire
import XCTest

/// Each provider profile driven through every flow it supports (login, refresh, a shaped token,
/// logout) against a fake of the provider that reproduces its documented behaviour
/// (`IdentityProviderFake`; the pages are cited beside each fake).
final class ProviderProfileFlowTests: XCTestCase {
    func service(_ json: String, _ fake: IdentityProviderFake) throws -> AuthService {
        let parsed = try AgentConfig.parse(Array(#"{"providers": [\#(json)]}"#.utf8), file: "c")
        return AuthService(config: AgentConfig(store: .memory, providers: parsed.providers), store: MemorySessionStore(),
                           transport: fake.server, logger: Logger(level: .error, sink: { _ in }), httpTimeout: 5, events: { _ in })
    }

    func accounts(_ service: AuthService) -> Int { service.status().first?.accounts.count ?? -1 }

    // MARK: Entra ID

    /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc: the document is at
    /// `{tenant}/v2.0/.well-known/openid-configuration`, and the multi-tenant ones name
    /// `https://login.microsoftonline.com/{tenantid}/v2.0`. https://learn.microsoft.com/en-us/entra/identity-platform/scopes-oidc:
    /// `{resource}/.default`, and refresh tokens for `offline_access` only. `resource` is refused with
    /// AADSTS9010010 (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes; vscode#321249).
    static func entra() -> IdentityProviderFake {
        let base = "https://login.microsoftonline.com/common"
        return IdentityProviderFake(.init(
            metadataPath: "/common/v2.0/.well-known/openid-configuration", metadataIssuer: "https://login.microsoftonline.com/{tenantid}/v2.0",
            metadata: ["authorization_endpoint": .string("\(base)/oauth2/v2.0/authorize"), "token_endpoint": .string("\(base)/oauth2/v2.0/token"),
                       "device_authorization_endpoint": .string("\(base)/oauth2/v2.0/devicecode"),
                       "scopes_supported": ["openid", "profile", "email", "offline_access"]],
            tokenPath: "/common/oauth2/v2.0/token", devicePath: "/common/oauth2/v2.0/devicecode",
            refusesResource: (400, #"{"error":"invalid_request","error_description":"AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes.","error_codes":[9010010]}"#),
            refreshTokenFor: { ($0["scope"] ?? "").split(separator: " ").contains("offline_access") }))
    }

    func testEntraLogsInFromItsTenantDocumentAndAsksForResourcesAsDefaultScopes() async throws {
        let fake = Self.entra()
        let service = try service(#"{"id": "work", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "origins": ["https://graph.microsoft.com"]}"#, fake)
        _ = try await service.login(provider: "work", credentials: nil, context: fake.person)
        XCTAssertEqual(fake.count("/common/v2.0/.well-known/openid-configuration"), 1, "its document, naming the issuer template, is taken")
        XCTAssertEqual(fake.count("/.well-known/oauth-authorization-server/common/v2.0"), 0, "no RFC 8414 path is asked for")
        let token = try await service.token(provider: "work", shape: TokenShape(resource: "https://graph.microsoft.com"))
        XCTAssertEqual(token.accessToken, "at-2")
        let shaped = try XCTUnwrap(fake.tokenRequests.last)
        XCTAssertNil(shaped["resource"], "resource is refused by Entra (AADSTS9010010)")
        XCTAssertEqual(shaped["scope"], "https://graph.microsoft.com/.default")
        XCTAssertEqual(shaped["grant_type"], "refresh_token", "the refresh token came because offline_access was asked for")
        _ = try await service.refresh(provider: "work", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.count, 3)
        _ = try await service.logout(provider: "work")
        XCTAssertEqual(accounts(service), 0)
    }

    func testEntraDeviceLogin() async throws {
        let fake = Self.entra()
        let service = try service(#"{"id": "work", "profile": "entra", "flow": "deviceCode", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "origins": ["https://graph.microsoft.com"]}"#, fake)
        _ = try await service.login(provider: "work", credentials: nil, context: fake.person)
        let device = try XCTUnwrap(fake.server.requests.first { $0.url.hasSuffix("/devicecode") })
        XCTAssertEqual(FormEncoding.uniqueParameters(device.body ?? [])?["scope"], "openid profile offline_access")
        _ = try await service.refresh(provider: "work", failedAuthorization: nil)
    }

    // MARK: GitHub

    /// https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps: the device
    /// flow at `github.com/login/device/code`, tokens at `/login/oauth/access_token`, answers form-encoded
    /// unless `Accept: application/json`, `200` with `error` while pending; OAuth-app tokens without expiry
    /// or refresh token. https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens:
    /// a GitHub app's user tokens last 8 h, with a rotating refresh token. No OpenID discovery.
    static func github(app: Bool) -> IdentityProviderFake {
        IdentityProviderFake(.init(tokenPath: "/login/oauth/access_token", devicePath: "/login/device/code",
                                   refreshTokenFor: { _ in app }, rotates: app, expiresIn: app ? 28800 : nil, githubAnswers: true,
                                   userPath: "/user", user: ["login": "octocat", "id": 1]))
    }

    func testGitHubLogsInWithTheDeviceFlowAndItsTokensNeverExpire() async throws {
        let fake = Self.github(app: false)
        let service = try service(#"{"id": "gh", "issuer": "https://github.com", "clientId": "Ov23li", "origins": ["https://api.github.com", "https://github.com"]}"#, fake)
        let login = try await service.login(provider: "gh", credentials: nil, context: fake.person)
        XCTAssertNil(login.expiresAt, "an OAuth app's token never expires")
        XCTAssertEqual(fake.tokenRequests.count, 2, "one pending answer (HTTP 200 with error), then the token")
        XCTAssertFalse(fake.server.requests.contains { $0.url.contains(".well-known") }, "GitHub has no discovery")
        XCTAssertEqual(FormEncoding.uniqueParameters(fake.server.requests.first?.body ?? [])?["scope"], "repo")
        let token = try await service.token(provider: "gh")
        XCTAssertEqual(token.accessToken, "at-1")
        XCTAssertEqual(service.config.providers.first?.gitUsername, "x-access-token")
        _ = try await service.logout(provider: "gh")
        XCTAssertEqual(accounts(service), 0)
    }

    func testAGitHubAppsUserTokenIsRefreshedAndItsRefreshTokenRotates() async throws {
        let fake = Self.github(app: true)
        let service = try service(#"{"id": "gh", "profile": "github", "clientId": "Iv1.app", "origins": ["https://api.github.com"]}"#, fake)
        let login = try await service.login(provider: "gh", credentials: nil, context: fake.person)
        XCTAssertNotNil(login.expiresAt)
        _ = try await service.refresh(provider: "gh", failedAuthorization: nil)
        _ = try await service.refresh(provider: "gh", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.suffix(2).map { $0["refresh_token"] }, ["rt-1", "rt-2"], "each refresh spends the last rotated token")
    }

    func testGitHubsWebFlowSendsTheSecret() async throws {
        let fake = IdentityProviderFake(.init(tokenPath: "/login/oauth/access_token", secret: "s3", refreshTokenFor: { _ in false }, expiresIn: nil, githubAnswers: true))
        let service = try service(#"{"id": "gh", "profile": "github", "flow": "authorizationCode", "clientId": "Ov23li", "clientSecret": "s3", "origins": ["https://api.github.com"]}"#, fake)
        _ = try await service.login(provider: "gh", credentials: nil, context: fake.person)
        XCTAssertEqual(fake.server.requests.first { $0.url.hasSuffix("/access_token") }?.header("Authorization"), FormEncoding.basicAuthorization(clientId: "Ov23li", clientSecret: "s3"))
    }

    // MARK: Google

    /// https://developers.google.com/identity/protocols/oauth2/native-app: Desktop clients send their
    /// `client_secret`; https://developers.google.com/identity/protocols/oauth2/web-server#offline: a
    /// refresh token for `access_type=offline` (again only with `prompt=consent`);
    /// https://support.google.com/a/answer/9368756: `invalid_grant` / `invalid_rapt` asks for a new sign-in.
    static func google() -> IdentityProviderFake {
        IdentityProviderFake(.init(
            metadataPath: "/.well-known/openid-configuration", metadataIssuer: "https://accounts.google.com",
            metadata: ["authorization_endpoint": "https://accounts.google.com/o/oauth2/v2/auth", "token_endpoint": "https://oauth2.googleapis.com/token",
                       "device_authorization_endpoint": "https://oauth2.googleapis.com/device/code", "revocation_endpoint": "https://oauth2.googleapis.com/revoke",
                       "userinfo_endpoint": "https://openidconnect.googleapis.com/v1/userinfo"],
            tokenPath: "/token", devicePath: "/device/code", revokePath: "/revoke", secret: "GOCSPX-s",
            refreshTokenFor: { $0["access_type"] == "offline" && $0["prompt"] == "consent" || $0["access_type"] == nil && $0["redirect_uri"] == nil },
            userPath: "/v1/userinfo", user: ["sub": "1077", "email": "alice@example.com"],
            refreshRefusal: #"{"error":"invalid_grant","error_description":"reauth related error (invalid_rapt)","error_uri":"https://support.google.com/a/answer/9368756","error_subtype":"invalid_rapt"}"#))
    }

    func testGoogleGetsARefreshTokenWithOfflineConsentAndInvalidRaptAsksForANewLogin() async throws {
        let fake = Self.google()
        let service = try service(#"{"id": "g", "issuer": "https://accounts.google.com", "clientId": "x.apps.googleusercontent.com", "clientSecret": "GOCSPX-s", "origins": ["https://www.googleapis.com"]}"#, fake)
        _ = try await service.login(provider: "g", credentials: nil, context: fake.person)
        _ = try await service.refresh(provider: "g", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token", "access_type=offline and prompt=consent brought a refresh token")
        let revoked = try await service.logout(provider: "g")
        XCTAssertTrue(revoked)
        XCTAssertEqual(fake.count("/revoke"), 1)

        _ = try await service.login(provider: "g", credentials: nil, context: fake.person)
        fake.refuseRefreshes()
        do {
            _ = try await service.refresh(provider: "g", failedAuthorization: nil)
            XCTFail("refreshed")
        } catch {
            XCTAssertTrue(error.message.contains("Google asks for a new sign-in (a Workspace reauthentication policy): log in again (reauth related error (invalid_rapt))"), error.message)
        }
        XCTAssertEqual(accounts(service), 0, "the refresh token is dead")
    }

    func testGoogleDeviceLoginSendsTheSecret() async throws {
        let fake = Self.google()
        let service = try service(#"{"id": "g", "profile": "google", "flow": "deviceCode", "issuer": "https://accounts.google.com", "clientId": "tv.apps.googleusercontent.com", "clientSecret": "GOCSPX-s", "origins": ["https://www.googleapis.com"]}"#, fake)
        _ = try await service.login(provider: "g", credentials: nil, context: fake.person)
        _ = try await service.refresh(provider: "g", failedAuthorization: nil)
    }

    // MARK: GitLab

    /// https://docs.gitlab.com/api/oauth2/: PKCE, the device flow, refresh tokens that rotate, revocation at
    /// `/oauth/revoke`; https://docs.gitlab.com/integration/openid_connect_provider/: OpenID discovery.
    static func gitlab() -> IdentityProviderFake {
        IdentityProviderFake(.init(
            metadataPath: "/.well-known/openid-configuration", metadataIssuer: "https://gitlab.com",
            metadata: ["authorization_endpoint": "https://gitlab.com/oauth/authorize", "token_endpoint": "https://gitlab.com/oauth/token",
                       "revocation_endpoint": "https://gitlab.com/oauth/revoke", "device_authorization_endpoint": "https://gitlab.com/oauth/authorize_device"],
            tokenPath: "/oauth/token", devicePath: "/oauth/authorize_device", revokePath: "/oauth/revoke", rotates: true, expiresIn: 7200))
    }

    func testGitLabLogsInBothWaysForGitAndRotatesRefreshTokens() async throws {
        let fake = Self.gitlab()
        let service = try service(#"{"id": "gl", "issuer": "https://gitlab.com", "clientId": "app", "origins": ["https://gitlab.com"]}"#, fake)
        XCTAssertEqual(service.config.providers.first?.gitUsername, "oauth2")
        _ = try await service.login(provider: "gl", credentials: nil, context: fake.person)
        _ = try await service.refresh(provider: "gl", failedAuthorization: nil)
        _ = try await service.refresh(provider: "gl", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.suffix(2).map { $0["refresh_token"] }, ["rt-1", "rt-2"])
        _ = try await service.login(provider: "gl", flow: .deviceCode, credentials: nil, context: fake.person)
        let device = try XCTUnwrap(fake.server.requests.first { $0.url.hasSuffix("/authorize_device") })
        XCTAssertEqual(FormEncoding.uniqueParameters(device.body ?? [])?["scope"], "openid read_repository write_repository")
        let revoked = try await service.logout(provider: "gl")
        XCTAssertTrue(revoked, "revoked at the server")
    }

    // MARK: Okta, Auth0, Keycloak

    static let oktaIssuer = "https://acme.okta.com/oauth2/default"

    /// https://developer.okta.com/docs/concepts/auth-servers/: a custom authorization server at
    /// `/oauth2/{id}` with its metadata under it (no RFC 8414 path-inserted form); refresh tokens for
    /// `offline_access` (https://developer.okta.com/docs/guides/refresh-tokens/main/).
    /// https://developer.okta.com/docs/guides/device-authorization-grant/main ("Configure Device Authorization
    /// Grant Flow"): a Native app with the Device Authorization and Refresh Token grants asks
    /// `/oauth2/{id}/v1/device/authorize` (`client_id`, `scope` with `offline_access`), then polls `/v1/token`.
    static func okta() -> IdentityProviderFake {
        let issuer = oktaIssuer
        return IdentityProviderFake(.init(
            metadataPath: "/oauth2/default/.well-known/openid-configuration", metadataIssuer: issuer,
            metadata: ["authorization_endpoint": .string("\(issuer)/v1/authorize"), "token_endpoint": .string("\(issuer)/v1/token"),
                       "device_authorization_endpoint": .string("\(issuer)/v1/device/authorize"), "revocation_endpoint": .string("\(issuer)/v1/revoke")],
            tokenPath: "/oauth2/default/v1/token", devicePath: "/oauth2/default/v1/device/authorize", revokePath: "/oauth2/default/v1/revoke",
            refreshTokenFor: { ($0["scope"] ?? "").split(separator: " ").contains("offline_access") }))
    }

    func testOktaReadsItsAuthorizationServersMetadataAndAsksForOfflineAccess() async throws {
        let issuer = Self.oktaIssuer
        let fake = Self.okta()
        let service = try service(#"{"id": "okta", "issuer": "\#(issuer)", "clientId": "0oa", "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "okta", credentials: nil, context: fake.person)
        XCTAssertEqual(fake.server.requests.first.map { URL(string: $0.url)!.path }, "/oauth2/default/.well-known/openid-configuration", "its own metadata first")
        _ = try await service.refresh(provider: "okta", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token", "offline_access brought a refresh token")
        let sent = fake.tokenRequests.count
        do {
            _ = try await service.token(provider: "okta", shape: TokenShape(audience: "api://orders"))
            XCTFail("another audience from one authorization server")
        } catch {
            XCTAssertEqual(error.code, .scopeNotGranted)
            XCTAssertTrue(error.message.contains("Okta sets the audience per authorization server"), error.message)
        }
        XCTAssertEqual(fake.tokenRequests.count, sent, "refused before any request")
        let revoked = try await service.logout(provider: "okta")
        XCTAssertTrue(revoked, "revoked at the server")
    }

    /// https://auth0.com/docs/secure/tokens/access-tokens/get-access-tokens: `audience` names the API;
    /// https://auth0.com/docs/secure/tokens/refresh-tokens/get-refresh-tokens: `offline_access` for a refresh token;
    /// https://auth0.com/docs/get-started/authentication-and-authorization-flow/device-authorization-flow: `/oauth/device/code`.
    static func auth0() -> IdentityProviderFake {
        IdentityProviderFake(.init(
            metadataPath: "/.well-known/openid-configuration", metadataIssuer: "https://acme.auth0.com/",
            metadata: ["authorization_endpoint": "https://acme.auth0.com/authorize", "token_endpoint": "https://acme.auth0.com/oauth/token",
                       "device_authorization_endpoint": "https://acme.auth0.com/oauth/device/code", "revocation_endpoint": "https://acme.auth0.com/oauth/revoke"],
            tokenPath: "/oauth/token", devicePath: "/oauth/device/code", revokePath: "/oauth/revoke",
            refreshTokenFor: { ($0["scope"] ?? "").split(separator: " ").contains("offline_access") }))
    }

    func testAuth0AsksForAnAPIWithAudience() async throws {
        let fake = Self.auth0()
        let service = try service(#"{"id": "a0", "issuer": "https://acme.auth0.com/", "clientId": "c", "origins": ["https://api.example.com"]}"#, fake)
        _ = try await service.login(provider: "a0", credentials: nil, context: fake.person)
        _ = try await service.token(provider: "a0", shape: TokenShape(resource: "https://orders.example.com"))
        let shaped = try XCTUnwrap(fake.tokenRequests.last)
        XCTAssertEqual(shaped["audience"], "https://orders.example.com")
        XCTAssertNil(shaped["resource"])
        _ = try await service.logout(provider: "a0")
    }

    static let keycloakIssuer = "https://sso.example.com/realms/dev"

    /// https://www.keycloak.org/docs/latest/server_admin/#_offline-access: a realm's refresh tokens come
    /// without `offline_access`; with it they are offline tokens, which report `refresh_expires_in: 0`
    /// (no fixed expiry: grounds-cli#40) yet end when unused for the realm's Offline Session Idle,
    /// refused then with `invalid_grant` "Offline session not active" (Keycloak's TokenManager).
    /// https://www.keycloak.org/docs/latest/securing_apps/#device-authorization-grant: the device flow at
    /// `/protocol/openid-connect/auth/device`.
    static func keycloak() -> IdentityProviderFake {
        let issuer = keycloakIssuer
        return IdentityProviderFake(.init(
            metadataPath: "/realms/dev/.well-known/openid-configuration", metadataIssuer: issuer,
            metadata: ["authorization_endpoint": .string("\(issuer)/protocol/openid-connect/auth"), "token_endpoint": .string("\(issuer)/protocol/openid-connect/token"),
                       "device_authorization_endpoint": .string("\(issuer)/protocol/openid-connect/auth/device"),
                       "revocation_endpoint": .string("\(issuer)/protocol/openid-connect/revoke")],
            tokenPath: "/realms/dev/protocol/openid-connect/token", devicePath: "/realms/dev/protocol/openid-connect/auth/device",
            revokePath: "/realms/dev/protocol/openid-connect/revoke", rotates: true, expiresIn: 300,
            refreshRefusal: #"{"error":"invalid_grant","error_description":"Offline session not active"}"#,
            refreshExpiresIn: { ($0["scope"] ?? "").split(separator: " ").contains("offline_access") ? 0 : 1800 }))
    }

    func testKeycloakRealmNeedsNoOfflineAccess() async throws {
        let issuer = Self.keycloakIssuer
        let fake = Self.keycloak()
        let service = try service(#"{"id": "kc", "issuer": "\#(issuer)", "clientId": "cli", "origins": ["https://api.example.com"]}"#, fake)
        XCTAssertEqual(service.config.providers.first?.scopes, ["openid", "profile"])
        _ = try await service.login(provider: "kc", credentials: nil, context: fake.person)
        _ = try await service.refresh(provider: "kc", failedAuthorization: nil)
        XCTAssertEqual(fake.tokenRequests.last?["grant_type"], "refresh_token")
        let revoked = try await service.logout(provider: "kc")
        XCTAssertTrue(revoked, "revoked at the server")
    }
}
