@testable import AuthCore
import Foundation
import JSON
import Locking
import TestSupport
import Wire
import XCTest

/// Issue 31 item 2: a server that refuses RFC 8707's `resource` — `invalid_target`, or Entra ID's
/// AADSTS9010010 under whatever code (https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes;
/// enforced since 2026, vscode#321249) — is asked again once without it, and its issuer is remembered:
/// later requests of any provider leave it out, and `--log-level debug` is told once.
final class ResourceRefusalTests: XCTestCase {
    static let issuer = "https://as.example.com"

    /// A token endpoint that refuses any request naming `resource` with `refusal`, and grants the others.
    private func server(_ refusal: String) -> FakeOAuthServer {
        FakeOAuthServer { request in
            let form = FormEncoding.uniqueParameters(request.body ?? []) ?? [:]
            if form["resource"] != nil { return HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Array(refusal.utf8)) }
            return FakeOAuthServer.json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 60])
        }
    }

    /// A learned provider of `issuer` for `resource`, talking through `discovery` (one per agent).
    private func client(_ server: FakeOAuthServer, _ discovery: Discovery, resource: String = "https://api.example.com/mcp",
                        debug: @escaping @Sendable (String) -> Void = { _ in }) -> OAuthClient {
        var config = ProviderConfig(id: "api.example.com", flow: .clientCredentials, tokenEndpoint: "\(Self.issuer)/token", clientId: "c")
        config.learned = LearnedResource(resource: resource, coverage: [resource], issuer: Self.issuer, sendsIss: false)
        let http = HTTPCalls(transport: server, timeout: 5)
        var client = OAuthClient(config: config, http: http, clock: SystemClock(), discovery: discovery, lifetimeWarning: WarnOnce { _ in })
        client.debug = debug
        return client
    }

    private func bodies(_ server: FakeOAuthServer) -> [[String: String]] {
        server.requests.map { FormEncoding.uniqueParameters($0.body ?? []) ?? [:] }
    }

    func testARefusedResourceIsAskedForAgainWithoutItAndTheIssuerRemembered() async throws {
        for refusal in [#"{"error":"invalid_target","error_description":"unknown resource"}"#,
                        #"{"error":"invalid_request","error_description":"AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes."}"#] {
            let server = server(refusal)
            let discovery = Discovery(http: HTTPCalls(transport: server, timeout: 5))
            let said = Locked<[String]>([])
            let first = client(server, discovery, debug: { line in said.withLock { $0.append(line) } })
            let result = await first.grant([("grant_type", "client_credentials")])
            guard case .success(let token) = result else { return XCTFail("\(result)") }
            XCTAssertEqual(token.accessToken, "at")
            XCTAssertEqual(bodies(server).map { $0["resource"] }, ["https://api.example.com/mcp", nil], "asked once more, without it")
            XCTAssertEqual(said.withLock { $0 }.count, 1)
            XCTAssertTrue(said.withLock { $0 }.first?.contains("https://as.example.com refused the resource parameter") == true, "\(said.withLock { $0 })")

            // Another provider of the same server (another API it guards) does not send it at all.
            let other = client(server, discovery, resource: "https://api.example.com/other")
            _ = await other.grant([("grant_type", "client_credentials")])
            XCTAssertEqual(bodies(server).count, 3)
            XCTAssertNil(bodies(server).last?["resource"])
            XCTAssertNil(other.automaticResource, "nor in an authorization request")
            XCTAssertEqual(said.withLock { $0 }.count, 1, "said once")
        }
    }

    func testAnExplicitResourceAndOtherRefusalsAreNotRetried() async throws {
        let server = server(#"{"error":"invalid_target"}"#)
        let discovery = Discovery(http: HTTPCalls(transport: server, timeout: 5))
        let refused = await client(server, discovery).grant([("grant_type", "client_credentials"), ("resource", "https://api.example.com/asked")])
        XCTAssertEqual(refused, .rejected(error: "invalid_target", description: nil), "a shape that asked for this resource is told no")
        XCTAssertEqual(server.requests.count, 1)

        let grantRefused = FakeOAuthServer { _ in FakeOAuthServer.json(400, ["error": "invalid_grant"]) }
        let result = await client(grantRefused, Discovery(http: HTTPCalls(transport: grantRefused, timeout: 5))).grant([("grant_type", "client_credentials")])
        XCTAssertEqual(result, .rejected(error: "invalid_grant", description: nil))
        XCTAssertEqual(grantRefused.requests.count, 1)
    }

    /// Glewlwyd 2.7.5 with RFC 8707 on refuses an unknown `resource` at its device authorization
    /// endpoint already (400 `invalid_target`, "Invalid Resource", in its protocol_oidc.c): asked
    /// again once without it, and the issuer remembered.
    func testADeviceAuthorizationRefusingTheResourceIsAskedAgainWithoutIt() async throws {
        let server = FakeOAuthServer { request in
            let form = FormEncoding.uniqueParameters(request.body ?? []) ?? [:]
            if request.url.hasSuffix("/device") {
                if form["resource"] != nil { return FakeOAuthServer.json(400, ["error": "invalid_target", "error_description": "Invalid Resource"]) }
                return FakeOAuthServer.json(200, ["device_code": "dc", "user_code": "U", "verification_uri": "https://as.example.com/device", "interval": 1])
            }
            return FakeOAuthServer.json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 60])
        }
        let discovery = Discovery(http: HTTPCalls(transport: server, timeout: 5))
        var config = ProviderConfig(id: "api.example.com", flow: .deviceCode, tokenEndpoint: "\(Self.issuer)/token", clientId: "c")
        config.deviceAuthorizationEndpoint = "\(Self.issuer)/device"
        config.learned = LearnedResource(resource: "https://api.example.com/mcp", coverage: ["https://api.example.com/mcp"], issuer: Self.issuer, sendsIss: false)
        let oauth = OAuthClient(config: config, http: HTTPCalls(transport: server, timeout: 5), clock: SystemClock(), discovery: discovery, lifetimeWarning: WarnOnce { _ in })
        let provider = DeviceCodeProvider(config: config, oauth: oauth, clock: SystemClock(), revokeTimeout: 1, browser: BrowserLauncher())
        let session = try await provider.login(nil, context: LoginContext())
        XCTAssertEqual(session.accessToken, "at")
        XCTAssertEqual(bodies(server).map { $0["resource"] }, ["https://api.example.com/mcp", nil, nil], "the device request once with it, once without; the token request without")
        XCTAssertTrue(discovery.refusesResource(Self.issuer))
    }
}
