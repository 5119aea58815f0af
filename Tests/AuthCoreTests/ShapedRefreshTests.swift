@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import XCTest

/// Issue 15, tokens per request, at the flow level: what each flow sends to the
/// token endpoint for a shaped (scopes, audience, resource) refresh, what it makes
/// of the answer, and which flows cannot shape at all.
final class ShapedRefreshTests: XCTestCase {

    let transport = FakeOAuthServer()
    let clock = FakeClock()

    static let shape = TokenShape(scopes: ["write", "read", "read"], audience: "api://orders", resource: "https://api.example.com/v1")
    /// `shape`'s parameters as they go on the wire (a space is `+`).
    static let shapeForm = "scope=read+write&resource=https%3A%2F%2Fapi.example.com%2Fv1&audience=api%3A%2F%2Forders"

    private func provider(_ flow: Flow, configure: (inout ProviderConfig) -> Void = { _ in }) -> LoginProvider {
        var config = ProviderConfig(id: "corp", displayName: "Corp SSO", flow: flow)
        config.tokenEndpoint = "https://idp.example.com/token"
        config.clientId = "cli"
        configure(&config)
        let http = HTTPCalls(transport: transport, timeout: 2)
        let oauth = OAuthClient(config: config, http: http, clock: clock, discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        return flow.descriptor.makeProvider(FlowContext(config: config, http: http, oauth: oauth, clock: clock, revokeTimeout: 1,
                                                        browser: BrowserLauncher(), subjects: SubjectTokens()))
    }

    private var session: Session {
        Session(accessToken: "AT1", refreshToken: "RT1", expiresAt: clock.now().addingTimeInterval(10), idToken: "ID1",
                user: ["sub": "alice"], obtainedAt: clock.now().addingTimeInterval(-3590), generation: 4)
    }

    /// The form bodies sent to the token endpoint, in order.
    private var bodies: [String] {
        transport.requests.filter { $0.url.hasSuffix("/token") }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
    }

    static let refreshFlows: [Flow] = [.authorizationCode, .deviceCode, .password]

    // MARK: What is sent

    func testTheNoneShapeSendsTodaysRefreshRequest() async {
        for flow in Self.refreshFlows {
            transport.answer("/token", 200, #"{"access_token":"AT2","expires_in":60}"#)
            _ = await provider(flow).refresh(session, shape: .none)
        }
        XCTAssertEqual(bodies, Array(repeating: "grant_type=refresh_token&refresh_token=RT1&client_id=cli", count: 3))
    }

    func testAShapedRefreshAddsScopeResourceAndAudienceToTheRefreshTokenGrant() async {
        for flow in Self.refreshFlows {
            transport.answer("/token", 200, #"{"access_token":"AT2","expires_in":60}"#)
            _ = await provider(flow).refresh(session, shape: Self.shape)
        }
        _ = await provider(.password).refresh(session, shape: TokenShape(scopes: ["read"]))
        _ = await provider(.password).refresh(session, shape: TokenShape(resource: "https://api.example.com/v1"))
        XCTAssertEqual(bodies, Array(repeating: "grant_type=refresh_token&refresh_token=RT1&\(Self.shapeForm)&client_id=cli", count: 3) + [
            "grant_type=refresh_token&refresh_token=RT1&scope=read&client_id=cli",
            "grant_type=refresh_token&refresh_token=RT1&resource=https%3A%2F%2Fapi.example.com%2Fv1&client_id=cli",
        ])
    }

    func testAConfidentialClientAuthenticatesWithBasicAsForAnyRefresh() async throws {
        transport.answer("/token", 200, #"{"access_token":"AT2","expires_in":60}"#)
        _ = await provider(.authorizationCode) { $0.clientSecret = "s3cret" }.refresh(session, shape: TokenShape(scopes: ["read"]))
        XCTAssertEqual(bodies, ["grant_type=refresh_token&refresh_token=RT1&scope=read"])
        XCTAssertEqual(transport.requests.first?.header("Authorization"), "Basic Y2xpOnMzY3JldA==")
    }

    func testClientCredentialsAskForTheShapeDirectly() async {
        let flow = provider(.clientCredentials) { $0.scopes = ["openid", "api"] }
        transport.answer("/token", 200, #"{"access_token":"AT2","expires_in":60}"#)
        for shape in [TokenShape.none, Self.shape, TokenShape(audience: "api://orders")] {
            _ = await flow.refresh(session, shape: shape)
        }
        XCTAssertEqual(bodies, [
            "grant_type=client_credentials&scope=openid+api&client_id=cli",
            "grant_type=client_credentials&\(Self.shapeForm)&client_id=cli",
            "grant_type=client_credentials&scope=openid+api&audience=api%3A%2F%2Forders&client_id=cli",
        ], "a shape's scopes replace the configured ones; without scopes the configured ones are asked for, as at login")
    }

    func testFlowsThatCannotShapeSayUnsupportedAndSendNothing() async {
        let flows: [(String, LoginProvider, Session)] = [
            ("static token", provider(.token), session),
            ("session API", provider(.session) { $0.refreshEndpoint = "https://api.example.com/sessions/refresh" }, session),
            ("password without refresh token", provider(.password), Session(accessToken: "AT1", obtainedAt: clock.now())),
        ]
        for (name, flow, session) in flows {
            let outcome = await flow.refresh(session, shape: Self.shape)
            XCTAssertEqual(outcome, .unsupported, name)
        }
        XCTAssertEqual(transport.requests.count, 0)
    }

    func testTheSessionAPIStillRefreshesItsOwnToken() async {
        let flow = provider(.session) {
            $0.refreshEndpoint = "https://api.example.com/sessions/refresh"
            $0.tokenPointer = JSONPointer("/jwt")
        }
        transport.answer("/sessions/refresh", 200, #"{"jwt":"AT2"}"#)
        guard case .refreshed(let fresh) = await flow.refresh(session, shape: .none) else { return XCTFail("not refreshed") }
        XCTAssertEqual(fresh.accessToken, "AT2")
        XCTAssertEqual(transport.requests.map(\.url), ["https://api.example.com/sessions/refresh"])
    }

    // MARK: What is made of the answer

    func testAShapedTokenCarriesItsExpiryAndTheRotatedRefreshToken() async throws {
        transport.answer("/token", 200, #"{"access_token":"AT2","expires_in":120,"refresh_token":"RT2"}"#)
        let rotated = await provider(.authorizationCode).refresh(session, shape: Self.shape)
        guard case .refreshed(let fresh) = rotated else { return XCTFail("\(rotated)") }
        XCTAssertEqual(fresh.accessToken, "AT2")
        XCTAssertEqual(fresh.refreshToken, "RT2", "the rotation is picked up")
        XCTAssertEqual(fresh.expiresAt, clock.now().addingTimeInterval(120))
        XCTAssertEqual(fresh.obtainedAt, clock.now())
        XCTAssertEqual(fresh.idToken, "ID1")
        XCTAssertEqual(fresh.user, ["sub": "alice"])

        transport.answer("/token", 200, #"{"access_token":"AT3","expires_in":60}"#)
        guard case .refreshed(let kept) = await provider(.deviceCode).refresh(session, shape: Self.shape) else { return XCTFail() }
        XCTAssertEqual(kept.accessToken, "AT3")
        XCTAssertEqual(kept.refreshToken, "RT1", "no rotation: the old refresh token stays")
    }

    func testRefusalsOfTheShapeAreNotGrantedAndEverythingElseAsBefore() async {
        let cases: [(Int, String, RefreshOutcome)] = [
            (400, #"{"error":"invalid_scope","error_description":"write is not allowed"}"#, .notGranted(ServerRefusal(error: "invalid_scope", description: "write is not allowed"))),
            (400, #"{"error":"invalid_target","error_description":"unknown resource"}"#, .notGranted(ServerRefusal(error: "invalid_target", description: "unknown resource"))),
            (400, #"{"error":"invalid_target"}"#, .notGranted(ServerRefusal(error: "invalid_target", description: nil))),
            (400, #"{"error":"invalid_grant","error_description":"refresh token reused"}"#, .rejected(ServerRefusal(error: "invalid_grant", description: "refresh token reused"))),
            (401, #"{"error":"invalid_client"}"#, .rejected(ServerRefusal(error: "invalid_client", description: nil))),
            (503, "", .transient("the token endpoint answered HTTP 503")),
            (200, "[]", .malformed("the token endpoint's HTTP 200 answer is an array, not an object")),
        ]
        for (status, body, expected) in cases {
            for (flow, shape) in [(Flow.password, Self.shape), (.authorizationCode, .none), (.clientCredentials, Self.shape)] {
                transport.answer("/token", status, body)
                let outcome = await provider(flow).refresh(session, shape: shape)
                XCTAssertEqual(outcome, expected, "\(flow) \(status) \(body)")
            }
        }
    }

    // MARK: Through the service

    /// A refresh the server answers `invalid_scope` is 1013 and logs nobody out
    /// (before, any OAuth error on a refresh ended the session).
    func testTheServiceReportsARefusedScopeAsScopeNotGrantedAndKeepsTheSession() async throws {
        let config = AgentConfig(refreshWindowSeconds: 60, store: .memory, providers: [AuthServiceHardeningTests.oauthProvider])
        let events = TestBox<[AuthEvent]>([])
        let service = AuthService(config: config, store: MemorySessionStore(), transport: transport, clock: clock,
                                  logger: Logger(level: .debug, sink: WarningLog().sink), httpTimeout: 2, lockTimeout: 2,
                                  events: { event in events.update { $0.append(event) } })
        transport.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        transport.answer("/token", 400, #"{"error":"invalid_scope","error_description":"scope api was revoked for this client"}"#)
        _ = try await service.login(provider: "corp", credentials: AuthServiceHardeningTests.alice)
        do {
            _ = try await service.refresh(provider: "corp", failedAuthorization: nil)
            XCTFail("the refresh should fail")
        } catch {
            XCTAssertEqual(error.code, .scopeNotGranted)
            XCTAssertEqual(error.message, "Corp SSO did not grant the requested scopes, audience or resource (invalid_scope: scope api was revoked for this client).")
            XCTAssertEqual(error.rpcError.code, 1013)
            XCTAssertEqual(error.rpcError.data?["retryable"], false)
        }
        let current = try await service.token(provider: "corp")
        XCTAssertEqual(current.accessToken, "at-1", "the account stays logged in")
        XCTAssertFalse(events.get().contains { if case .loggedOut = $0 { return true } else { return false } }, "\(events.get())")
    }

    // MARK: The shape itself

    func testAShapeIsNormalisedSoThatEqualRequestsAreEqual() {
        XCTAssertEqual(TokenShape(scopes: ["b", "a", "b", ""]), TokenShape(scopes: ["a", "b"]))
        XCTAssertEqual(TokenShape(scopes: ["b", "a"]).scopes, ["a", "b"])
        XCTAssertEqual(Set([TokenShape(scopes: ["b", "a"]), TokenShape(scopes: ["a", "b"])]).count, 1)
        XCTAssertEqual(TokenShape(scopes: [""], audience: "", resource: ""), .none)
        XCTAssertTrue(TokenShape.none.isNone)
        XCTAssertTrue(TokenShape().formPairs.isEmpty)
        XCTAssertFalse(TokenShape(audience: "x").isNone)
        XCTAssertFalse(TokenShape(resource: "https://a.example/").isNone)
        XCTAssertFalse(TokenShape(scopes: ["a"]).isNone)
        XCTAssertNotEqual(TokenShape(audience: "x"), TokenShape(resource: "x"))
    }
}
