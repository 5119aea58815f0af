@testable import AuthCore
import Foundation
import JSON
import Logging
import TestSupport
import XCTest

/// `fetch` driving the one `Exchange` over a scripted server: what an answer asks is acted on at
/// the hop that got it, with one budget for the whole request.
final class FetchExchangeTests: XCTestCase {
    static let provider = ProviderConfig(
        id: "corp", displayName: "Corp SSO", flow: .password, origins: [Origin(url: "https://corp.example.com")!],
        tokenEndpoint: "https://idp.example.com/token", clientId: "cli")

    /// `/a` redirects to `/b`, which takes only `Bearer at-2`.
    private func service(_ server: FakeOAuthServer) -> AuthService {
        AuthService(config: AgentConfig(refreshWindowSeconds: 60, store: .memory, providers: [Self.provider]), store: MemorySessionStore(),
                    transport: server, clock: FakeClock(), logger: Logger(level: .error, sink: { _ in }), httpTimeout: 2, lockTimeout: 2, events: { _ in })
    }

    private static func server() -> FakeOAuthServer {
        let server = FakeOAuthServer { request in
            switch URL(string: request.url)?.path {
            case "/a": return HTTPResponse(status: 302, headers: ["Location": "https://corp.example.com/b"])
            case "/b" where request.header("authorization") == "Bearer at-2": return HTTPResponse(status: 200, body: Array("ok".utf8))
            default: return HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
        }
        server.answer("/token", 200, #"{"access_token":"at-1","refresh_token":"rt-1","expires_in":3600}"#)
        server.answer("/token", 200, #"{"access_token":"at-2","refresh_token":"rt-2","expires_in":3600}"#)
        return server
    }

    func testA401AfterARedirectRefreshesOnceAndResendsThatHop() async throws {
        let server = Self.server()
        let service = service(server)
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "wonderland"))
        let fetched = try await service.fetch(FetchRequest(method: "GET", url: "https://corp.example.com/a"), provider: nil)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertTrue(fetched.retried)
        XCTAssertEqual(server.count("/token"), 2, "the login and one refresh")
        XCTAssertEqual(server.count("/a"), 1, "the redirect is not followed again")
        XCTAssertEqual(server.requests.filter { $0.url.hasSuffix("/b") }.map { $0.header("authorization") }, ["Bearer at-1", "Bearer at-2"])
    }

    func testStillRefusedAfterTheRefreshIsGivenBackNotALoop() async throws {
        let server = Self.server()
        server.answer("/token", 200, #"{"access_token":"at-3","refresh_token":"rt-3","expires_in":3600}"#)
        let service = service(server)
        _ = try await service.login(provider: "corp", credentials: .password(username: "alice", password: "wonderland"))
        _ = try await service.refresh(provider: "corp", failedAuthorization: nil)  // at-2 now; the server's next is at-3
        let refused = try await service.fetch(FetchRequest(method: "GET", url: "https://corp.example.com/c"), provider: nil)
        XCTAssertEqual(refused.status, 401)
        XCTAssertTrue(refused.retried)
        XCTAssertEqual(server.requests.filter { $0.url.hasSuffix("/c") }.map { $0.header("authorization") }, ["Bearer at-2", "Bearer at-3"])
    }
}
