@testable import AuthCore
import Foundation
import TestSupport
import XCTest

/// Issue 31: a learned API whose authorization server is a known identity provider gets that
/// provider's profile, recognised from the issuer as a configured provider's is — so its resource
/// is asked for the way the provider wants (Auth0's `audience`; nothing for Entra, which refuses
/// `resource` with AADSTS9010010), its refresh token as it needs (Google's `access_type=offline`),
/// and its refusals explained.
final class LearnedProfileTests: XCTestCase {
    static let resource = "https://mcp.example.com/mcp"

    private func learned(issuer: String) throws -> (ProviderConfig, OAuthClient) {
        let server = AuthorizationServer(issuer: issuer, authorizationEndpoint: issuer + "/authorize", tokenEndpoint: issuer + "/token",
                                         registrationEndpoint: nil, deviceAuthorizationEndpoint: nil, revocationEndpoint: nil,
                                         sendsIss: false, acceptsClientMetadataDocuments: false)
        var doc = LearnedDocument(apis: [LearnedAPI(id: "mcp.example.com", resource: Self.resource, server: server, scopes: ["mcp"])])
        doc.clients[issuer] = LearnedClient(clientId: "configured", clientSecret: nil, redirectPort: nil, scopes: [], registered: false)
        let config = try XCTUnwrap(doc.config(doc.apis[0], defaultOpenBrowser: false))
        let http = HTTPCalls(transport: FakeOAuthServer(), timeout: 5)
        return (config, OAuthClient(config: config, http: http, clock: SystemClock(), discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in }))
    }

    private func pairs(_ oauth: OAuthClient) -> [String] { oauth.resourcePairs(besides: []).map { "\($0.0)=\($0.1)" } }

    func testAnyOtherServerIsAskedForTheResource() throws {
        let (config, oauth) = try learned(issuer: "https://as.example.com")
        XCTAssertNil(config.providerProfile)
        XCTAssertEqual(pairs(oauth), ["resource=\(Self.resource)"])
    }

    func testEntraIsNotSentTheResourceParameter() throws {
        let (config, oauth) = try learned(issuer: "https://login.microsoftonline.com/1f0e5a9e-0000-4000-8000-000000000000/v2.0")
        XCTAssertEqual(config.providerProfile?.name, "entra")
        XCTAssertEqual(pairs(oauth), [], "AADSTS9010010: Entra refuses resource; the API is named by its scopes")
        XCTAssertNil(oauth.automaticResource, "nor on the authorization request")
    }

    func testAuth0IsAskedByAudience() throws {
        let (config, oauth) = try learned(issuer: "https://example.eu.auth0.com/")
        XCTAssertEqual(config.providerProfile?.name, "auth0")
        XCTAssertEqual(pairs(oauth), ["audience=\(Self.resource)"])
    }

    func testGoogleIsAskedForARefreshTokenItsWay() throws {
        let (config, _) = try learned(issuer: "https://accounts.google.com")
        XCTAssertEqual(config.providerProfile?.name, "google")
        XCTAssertEqual(config.authorizationExtras.map { "\($0.0)=\($0.1)" }, ["access_type=offline", "prompt=consent"])
    }
}
