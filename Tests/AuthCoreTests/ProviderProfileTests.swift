@testable import AuthCore
import JSON
import Wire
import XCTest

/// The provider profiles as data (issue 31 item 1): what each one changes, in one table, and how
/// the configuration reads them — named, recognised from the issuer, and overruled by the configuration.
final class ProviderProfileTests: XCTestCase {
    private func provider(_ json: String) throws -> ProviderConfig {
        let config = try AgentConfig.parse(Array(#"{"providers": [\#(json)]}"#.utf8), file: "c")
        return try XCTUnwrap(config.providers.first)
    }

    private func problem(_ json: String) -> String? {
        do { _ = try provider(json); return nil } catch let error as ConfigError { return error.problem } catch { return "\(error)" }
    }

    /// One row per profile: what it declares. A change to a profile changes this table, on purpose.
    func testWhatEachProfileChanges() {
        struct Row: Equatable {
            let name, discovery, resource, refresh: String
            let flows: [Flow]?, scopes: [String], git: String?, registers: Bool, secret: [Flow], meanings: [String]
        }
        let rows = ProviderProfile.providers.map {
            Row(name: $0.name, discovery: $0.discovery.rawValue, resource: $0.resourceParameter.rawValue, refresh: $0.refreshTokens.rawValue,
                flows: $0.defaultFlows, scopes: $0.defaultScopes, git: $0.gitUsername, registers: $0.registers, secret: $0.secretRequired,
                meanings: $0.refusalMeanings.keys.sorted())
        }
        XCTAssertEqual(rows, [
            Row(name: "entra", discovery: "openIDAppended", resource: "defaultScope", refresh: "offlineAccess", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "profile"], git: nil, registers: false, secret: [], meanings: []),
            Row(name: "google", discovery: "openIDAppended", resource: "resource", refresh: "offlineConsent", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "email", "profile"], git: nil, registers: false, secret: [.authorizationCode, .deviceCode], meanings: ["invalid_rapt"]),
            Row(name: "github", discovery: "none", resource: "granted", refresh: "given", flows: [.deviceCode],
                scopes: ["repo"], git: "x-access-token", registers: false, secret: [.authorizationCode], meanings: []),
            Row(name: "gitlab", discovery: "openIDAppended", resource: "resource", refresh: "given", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "read_repository", "write_repository"], git: "oauth2", registers: true, secret: [], meanings: []),
            Row(name: "okta", discovery: "openIDAppended", resource: "authorizationServer", refresh: "offlineAccess", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "profile"], git: nil, registers: false, secret: [], meanings: []),
            Row(name: "auth0", discovery: "anywhere", resource: "audience", refresh: "offlineAccess", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "profile"], git: nil, registers: true, secret: [], meanings: []),
            Row(name: "keycloak", discovery: "openIDAppended", resource: "resource", refresh: "given", flows: [.authorizationCode, .deviceCode],
                scopes: ["openid", "profile"], git: nil, registers: true, secret: [], meanings: []),
        ])
        XCTAssertEqual(ProviderProfile.github.endpoints["deviceAuthorizationEndpoint"], "https://github.com/login/device/code")
        XCTAssertEqual(ProviderProfile.github.endpoints["tokenEndpoint"], "https://github.com/login/oauth/access_token")
        XCTAssertEqual(ProviderProfile.all.map(\.name), ["fapi2", "entra", "google", "github", "gitlab", "okta", "auth0", "keycloak"])
    }

    func testAnIssuerPicksItsProviderProfile() {
        let cases: [(String, String?)] = [
            ("https://login.microsoftonline.com/common/v2.0", "entra"),
            ("https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0", "entra"),
            ("https://login.microsoftonline.com/common", nil),
            ("https://accounts.google.com", "google"),
            ("https://github.com", "github"),
            ("https://gitlab.com", "gitlab"),
            ("https://acme.okta.com/oauth2/default", "okta"),
            ("https://acme.okta.com", "okta"),
            ("https://acme.auth0.com/", "auth0"),
            ("https://sso.example.com/realms/dev", "keycloak"),
            ("https://sso.example.com/realms/dev/extra", nil),
            ("https://evil.example/github.com", nil),
            ("https://login.microsoftonline.com.evil.example/common/v2.0", nil),
        ]
        for (issuer, profile) in cases {
            XCTAssertEqual(ProviderProfile.recognised(issuer)?.name, profile, issuer)
        }
    }

    func testTheProfileFillsWhatTheConfigurationLeavesOutAndTheConfigurationWins() throws {
        let github = try provider(#"{"id": "gh", "profile": "github", "clientId": "Iv1.abc", "origins": ["https://github.com"]}"#)
        XCTAssertEqual(github.flows, [.deviceCode], "GitHub logs in with the device flow by default (its web flow needs the secret)")
        XCTAssertEqual(github.deviceAuthorizationEndpoint, "https://github.com/login/device/code")
        XCTAssertEqual(github.tokenEndpoint, "https://github.com/login/oauth/access_token")
        XCTAssertEqual(github.gitUsername, "x-access-token")
        XCTAssertEqual(github.scopes, ["repo"])
        XCTAssertFalse(github.discovers)

        let mine = try provider(#"{"id": "gh", "profile": "github", "flow": "deviceCode", "clientId": "Iv1.abc", "scopes": ["read:user"], "gitUsername": "me", "tokenEndpoint": "https://ghe.example.com/login/oauth/access_token", "origins": ["https://github.com"]}"#)
        XCTAssertEqual(mine.flows, [.deviceCode])
        XCTAssertEqual(mine.scopes, ["read:user"])
        XCTAssertEqual(mine.gitUsername, "me")
        XCTAssertEqual(mine.tokenEndpoint, "https://ghe.example.com/login/oauth/access_token")

        let entra = try provider(#"{"id": "work", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "origins": ["https://graph.microsoft.com"]}"#)
        XCTAssertEqual(entra.providerProfile?.name, "entra", "recognised from the issuer")
        XCTAssertEqual(entra.scopes, ["openid", "profile", "offline_access"], "offline_access for a refresh token")
        let scoped = try provider(#"{"id": "work", "profile": "entra", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "scopes": ["api://orders/.default"], "origins": ["https://graph.microsoft.com"]}"#)
        XCTAssertEqual(scoped.scopes, ["api://orders/.default", "offline_access"])
        let plain = try provider(#"{"id": "work", "profile": [], "flow": "authorizationCode", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "origins": ["https://graph.microsoft.com"]}"#)
        XCTAssertNil(plain.providerProfile, "an empty profile list turns recognition off")
        XCTAssertEqual(plain.scopes, [])
        let robot = try provider(#"{"id": "work", "profile": "entra", "flow": "clientCredentials", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "app", "clientSecret": "s", "origins": ["https://graph.microsoft.com"]}"#)
        XCTAssertFalse(robot.scopes.contains("offline_access"), "client credentials never refresh with a refresh token")
    }

    func testAProfileCombinesWithFAPI2AndTwoProvidersAreRefused() throws {
        let both = try provider(#"{"id": "bank", "profile": ["okta", "fapi2"], "flow": "authorizationCode", "issuer": "https://acme.okta.com/oauth2/default", "clientId": "c", "clientAuth": {"method": "private_key_jwt", "key": "/k.pem"}, "origins": ["https://api.bank.example"]}"#)
        XCTAssertEqual(both.profiles.map(\.name), ["okta", "fapi2"])
        XCTAssertTrue(both.par)
        XCTAssertTrue(both.dpop)
        XCTAssertEqual(problem(#"{"id": "x", "profile": ["okta", "auth0"], "issuer": "https://acme.okta.com", "clientId": "c", "origins": ["https://a.example"]}"#),
                       "names two identity providers (okta, auth0); a provider is one of them")
        XCTAssertEqual(problem(#"{"id": "x", "profile": "ping", "issuer": "https://acme.okta.com", "clientId": "c", "origins": ["https://a.example"]}"#),
                       #"unknown profile "ping"; expected one of "fapi2", "entra", "google", "github", "gitlab", "okta", "auth0", "keycloak""#)
    }

    func testWhatAProfileRefusesNamesTheProvider() {
        XCTAssertEqual(problem(#"{"id": "g", "issuer": "https://accounts.google.com", "clientId": "x.apps.googleusercontent.com", "origins": ["https://www.googleapis.com"]}"#),
                       #"Google (profile "google") requires the client's secret for flow "authorizationCode", even with PKCE from a desktop client: add "clientSecret""#)
        XCTAssertEqual(problem(#"{"id": "gh", "profile": "github", "flow": "authorizationCode", "clientId": "Iv1", "origins": ["https://github.com"]}"#),
                       #"GitHub (profile "github") requires the client's secret for flow "authorizationCode", even with PKCE from a desktop client: add "clientSecret""#)
        XCTAssertNil(problem(#"{"id": "gh", "profile": "github", "clientId": "Iv1", "origins": ["https://github.com"]}"#),
                     "GitHub's device flow needs no secret")
        XCTAssertEqual(problem(#"{"id": "w", "profile": "entra", "issuer": "https://login.microsoftonline.com/common/v2.0", "origins": ["https://graph.microsoft.com"]}"#),
                       #"Microsoft Entra ID (profile "entra") has no dynamic client registration: register an app and add its "clientId""#)
        XCTAssertEqual(problem(#"{"id": "o", "issuer": "https://acme.okta.com/oauth2/default", "clientId": "c", "origins": [{"origin": "https://api.example.com", "audience": "api://other"}]}"#),
                       "Okta (profile \"okta\") sets the audience per authorization server (/oauth2/{id}): the origin https://api.example.com needs a provider of its own with that server's issuer, not a resource or audience")
    }

    func testAResourceIsAskedForAsEachProviderWantsIt() throws {
        let shape = TokenShape(scopes: ["read"], resource: "https://graph.microsoft.com/")
        func pairs(_ json: String) throws -> String {
            FormEncoding.queryString(try provider(json).formPairs(shape))
        }
        XCTAssertEqual(try pairs(#"{"id": "w", "profile": "entra", "issuer": "https://login.microsoftonline.com/common/v2.0", "clientId": "a", "origins": ["https://graph.microsoft.com"]}"#),
                       "scope=https%3A%2F%2Fgraph.microsoft.com%2F.default%20read")
        XCTAssertEqual(try pairs(#"{"id": "a", "profile": "auth0", "issuer": "https://acme.auth0.com/", "clientId": "a", "origins": ["https://api.example.com"]}"#),
                       "scope=read&audience=https%3A%2F%2Fgraph.microsoft.com%2F")
        XCTAssertEqual(try pairs(#"{"id": "k", "issuer": "https://sso.example.com/realms/dev", "clientId": "a", "origins": ["https://api.example.com"]}"#),
                       "scope=read&resource=https%3A%2F%2Fgraph.microsoft.com%2F")
        let auth0 = try provider(#"{"id": "a", "profile": "auth0", "issuer": "https://acme.auth0.com/", "clientId": "a", "origins": ["https://api.example.com"]}"#)
        XCTAssertEqual(FormEncoding.queryString(auth0.formPairs(TokenShape(audience: "https://orders", resource: "https://other"))),
                       "audience=https%3A%2F%2Forders", "Auth0: the audience wins over the resource")
    }
}
