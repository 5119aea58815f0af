@testable import AuthCore
import Foundation
import JSON
import Logging
import XCTest

/// Issue 36: a server that forgot the client the agent registered (FastMCP restarted, a pruned
/// dynamic client). The registration is replaced once across processes and the login that follows
/// uses the new client, in the process that noticed; nobody is sent to a login that cannot work.
final class ForgottenClientTests: XCTestCase {
    func testTheStandingOfAClientIsReadFromTheServersAnswer() {
        XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: 302, body: []), .known, "a redirect to the login")
        XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: 200, body: Array("<form>".utf8)), .known, "the login page itself")
        let fastMCP = Array(#"{"error":"invalid_request","error_description":"Client ID 'x' not found"}"#.utf8)
        XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: 400, body: fastMCP),
                       .unknown("its authorization endpoint answers the login's request with HTTP 400 (invalid_request: Client ID 'x' not found)"))
        XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: 400, body: Array("<p>Invalid authorization request</p>".utf8)),
                       .unknown("its authorization endpoint answers the login's request with HTTP 400, an error page"))
        XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: 401, body: []), .unknown("its authorization endpoint answers the login's request with HTTP 401, an error page"))
        for status in [404, 405, 429, 500, 503] { XCTAssertEqual(ClientStanding.ofAuthorizationRequest(status: status, body: []), .unsure, "\(status)") }
        XCTAssertEqual(ClientStanding.ofRegistrationRead(status: 200), .known)
        for status in [401, 403, 404] {
            XCTAssertEqual(ClientStanding.ofRegistrationRead(status: status), .unknown("its registration endpoint answers HTTP \(status) for the client's registration"))
        }
        XCTAssertEqual(ClientStanding.ofRegistrationRead(status: 500), .unsure)
    }

    /// Two processes on one store: the one whose refresh meets `invalid_client` registers again at
    /// once; the other adopts that registration (no second one) and its login opens with it.
    func testARefreshRefusedWithInvalidClientRegistersAgainOnceAndEveryProcessLogsInWithTheNewClient() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        let (first, _) = Self.service(server, store: store)
        let (second, _) = Self.service(server, store: store)
        _ = try await first.login(resource: FakeAPI.resource, context: LearningTests.context(server))
        second.checkStore()
        XCTAssertEqual(second.status().first?.id, "api.example")
        server.unknownClients = ["dyn-1"]  // the server restarted
        do {
            _ = try await first.refresh(provider: "api.example", failedAuthorization: "at-1")
            XCTFail("refreshed")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .sessionExpired, error.message)
        }
        XCTAssertEqual(server.count("/register"), 2, "registered again at once: \(server.paths())")
        XCTAssertEqual(Self.keptClient(store), "dyn-2")
        second.checkStore()
        _ = try await second.login(provider: "api.example", credentials: nil, context: LearningTests.context(server))
        XCTAssertEqual(server.authorizeQuery?["client_id"], "dyn-2", "the other process adopted the new registration")
        _ = try await first.login(provider: "api.example", credentials: nil, context: LearningTests.context(server))
        XCTAssertEqual(server.authorizeQuery?["client_id"], "dyn-2")
        XCTAssertEqual(server.count("/register"), 2, "one registration between them")
    }

    /// Three processes meet the forgotten client at once (a refresh each, then the login `fetch`
    /// asks for): one registration and one login between them, each request answered.
    func testProcessesThatNoticeTogetherRegisterOnceAndLogInOnce() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        let services = (0..<3).map { _ in Self.service(server, store: store).0 }
        _ = try await services[0].login(resource: FakeAPI.resource, context: LearningTests.context(server))
        for service in services { service.checkStore() }
        (server.unknownClients, server.accessToken) = (["dyn-1"], "at-2")
        server.resetLog()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for service in services {
                group.addTask {
                    try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, login: .ifNeeded,
                                            context: LearningTests.context(server)).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(statuses, [200, 200, 200])
        XCTAssertEqual(server.count("/register"), 1, "\(server.paths())")
        XCTAssertEqual(server.lastForm("/token")["client_id"], "dyn-2")
        XCTAssertEqual(server.paths().filter { $0 == "/token" }.count, 2, "the refused refresh and one login: \(server.paths())")
    }

    /// The kept registration is checked before the browser opens: the prompt already names the
    /// new client, and no code is spent on the forgotten one.
    func testAKeptRegistrationTheServerForgotIsReplacedBeforeAnyoneIsSentToTheLogin() async throws {
        let server = FakeAPI()
        let (service, store) = Self.service(server)
        _ = try await service.login(resource: FakeAPI.resource, context: LearningTests.context(server))
        _ = try await service.logout(provider: "api.example")
        server.unknownClients = ["dyn-1"]
        server.resetLog()
        let prompts = PromptLog()
        _ = try await service.login(provider: "api.example", credentials: nil, context: LoginContext(prompt: { prompt, target in
            prompts.add(prompt)
            LearningTests.playBrowser(server)(prompt, target)
        }))
        XCTAssertEqual(prompts.clientIds, ["dyn-2"], "one prompt, for the new client")
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.count("/token"), 1, "no code exchange with the forgotten client")
        XCTAssertEqual(Self.keptClient(store), "dyn-2")
        // A known client's login costs one look at the authorization endpoint, and registers nothing.
        _ = try await service.logout(provider: "api.example")
        server.resetLog()
        _ = try await service.login(provider: "api.example", credentials: nil, context: LearningTests.context(server))
        XCTAssertEqual(server.paths(), ["/authorize", "/token"])
    }

    /// A refused refresh (`invalid_grant`, which an expired refresh token gets too) registers again
    /// only when the server's RFC 7592 read says the client is gone.
    func testARefusedRefreshAsksTheRegistrationEndpointWhetherTheClientIsGone() async throws {
        let server = FakeAPI()
        server.managesRegistrations = true
        let (service, store) = Self.service(server)
        _ = try await service.login(resource: FakeAPI.resource, context: LearningTests.context(server))
        server.deadRefreshTokens = ["rt-1"]
        server.resetLog()
        do { _ = try await service.refresh(provider: "api.example", failedAuthorization: "at-1"); XCTFail("refreshed") } catch let error as AuthError {
            XCTAssertEqual(error.code, .sessionExpired)
        }
        // The resource's metadata first: a learned API whose token was rejected may have moved (`followMove`).
        XCTAssertEqual(server.paths(), ["/.well-known/oauth-protected-resource/mcp", "/token", "/register/dyn-1"], "the client is still known: nothing else")
        XCTAssertEqual(Self.keptClient(store), "dyn-1")

        _ = try await service.login(provider: "api.example", credentials: nil, context: LearningTests.context(server))
        server.unknownClients = ["dyn-1"]
        server.resetLog()
        do { _ = try await service.refresh(provider: "api.example", failedAuthorization: "at-1"); XCTFail("refreshed") } catch let error as AuthError {
            XCTAssertEqual(error.code, .sessionExpired)
        }
        XCTAssertEqual(server.paths(), ["/.well-known/oauth-protected-resource/mcp", "/token", "/register/dyn-1", "/register"])
        XCTAssertEqual(Self.keptClient(store), "dyn-2")
    }

    /// `fetch` with `login: "ifNeeded"` after the server forgot both the token and the client: one
    /// login at once, with a new registration, and the request's answer — not "log in again".
    func testFetchIfNeededLogsInAtOnceWhenTheServerForgotTheClient() async throws {
        let server = FakeAPI()
        let (service, _) = Self.service(server)
        _ = try await service.login(resource: FakeAPI.resource, context: LearningTests.context(server))
        (server.unknownClients, server.accessToken) = (["dyn-1"], "at-2")
        server.resetLog()
        let answer = try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, login: .ifNeeded,
                                             context: LearningTests.context(server))
        XCTAssertEqual(answer.status, 200)
        XCTAssertTrue(answer.retried)
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.authorizeQuery?["client_id"], "dyn-2")
    }

    static func service(_ server: FakeAPI, store: SessionStore = MemorySessionStore()) -> (AuthService, SessionStore) {
        (AuthService(config: AgentConfig(), store: store, transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in }), store)
    }

    static func keptClient(_ store: SessionStore) -> String? {
        ((try? store.loadDocument(StoreKeys.learned)) ?? nil).map(LearnedDocument.decode)?.clients[FakeAPI.issuer]?.clientId
    }

    final class PromptLog: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []
        func add(_ prompt: LoginPrompt) {
            guard case .browser(let url, _) = prompt else { return }
            let id = URLComponents(string: url)?.queryItems?.first { $0.name == "client_id" }?.value ?? "?"
            lock.withLock { ids.append(id) }
        }
        var clientIds: [String] { lock.withLock { ids } }
    }
}

extension LearningTests {
    static func context(_ server: FakeAPI) -> LoginContext { LoginContext(prompt: playBrowser(server)) }
}
