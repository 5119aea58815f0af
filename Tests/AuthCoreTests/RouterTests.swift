@testable import AuthCore
import JSONRPC
import Logging
import TestSupport
import XCTest

/// The one router: which provider a URL's request goes to, with which token shape —
/// configured origins (https or loopback only), learned path prefixes (seen as soon as
/// they are learned), and a provider the request names.
final class RouterTests: XCTestCase {
    private static let shaped = TokenShape(scopes: ["files.read"])

    /// `corp` covers an https origin (one with a shape of its own), a loopback one, and a plain-http
    /// one that is not loopback (which never gets a token); `files` covers another origin.
    private func makeService(store: SessionStore = MemorySessionStore()) -> AuthService {
        var corp = ProviderConfig(id: "corp", flow: .password, origins: ["https://api.example.com", "http://127.0.0.1:8080", "http://plain.example.com",
                                                                         "https://shaped.example.com"].map { Origin(url: $0)! },
                                  tokenEndpoint: "https://sso.example.com/token", clientId: "cli")
        corp.originShapes = [Origin(url: "https://shaped.example.com")!: Self.shaped]
        let files = ProviderConfig(id: "files", flow: .password, origins: [Origin(url: "https://files.example.com")!],
                                   tokenEndpoint: "https://sso.example.com/token", clientId: "cli")
        return AuthService(config: AgentConfig(store: .memory, providers: [corp, files]), store: store,
                           transport: AccountSessionTests.FakeTokenEndpoint(), clock: FakeClock(),
                           logger: Logger(level: .error, sink: { _ in }), events: { _ in })
    }

    /// A learned provider for `resource` at a made-up authorization server.
    private func learned(_ resource: String, _ service: AuthService) -> ProviderAccounts {
        var doc = LearnedDocument()
        let server = AuthorizationServer(issuer: "https://as.example", tokenEndpoint: "https://as.example/token", sendsIss: false,
                                         acceptsClientMetadataDocuments: false)
        let api = LearnedAPI(id: doc.id(for: resource), resource: resource, server: server, scopes: [])
        doc.clients[server.issuer] = LearnedClient(clientId: "c", clientSecret: nil, redirectPort: nil, scopes: [], registered: true)
        return AuthService.makeAccounts(doc.config(api, defaultOpenBrowser: false)!, http: service.http, discovery: service.discovery,
                                        clock: service.clock, logger: service.logger, nonces: service.nonces, subjects: service.subjects)
    }

    private func provider(_ router: Router, _ url: String, explicit: String? = nil) throws -> String? {
        try router.route(url: url, provider: explicit)?.provider
    }

    func testConfiguredOriginsWithTheirShapes() throws {
        let router = makeService().router
        XCTAssertEqual(try provider(router, "https://api.example.com/v1/items"), "corp")
        XCTAssertEqual(try router.route(url: "https://api.example.com/v1/items", provider: nil)?.shape, TokenShape.none)
        XCTAssertEqual(try router.route(url: "https://shaped.example.com/x", provider: nil)?.shape, Self.shaped)
        XCTAssertEqual(try provider(router, "https://files.example.com/"), "files")
        XCTAssertNil(try provider(router, "https://api.example.com.evil.com/"))
        XCTAssertNil(try provider(router, "not a url"))
    }

    /// A token goes over https, or to loopback: an http origin that is not loopback is covered by nobody,
    /// even when a provider lists it, and naming that provider is refused.
    func testPlainHTTPOffLoopbackIsNotCovered() throws {
        let router = makeService().router
        XCTAssertEqual(try provider(router, "http://127.0.0.1:8080/x"), "corp")
        XCTAssertNil(try provider(router, "http://plain.example.com/x"))
        XCTAssertNil(router.provider(forURL: "http://plain.example.com/x", explicit: nil))
        XCTAssertThrowsError(try router.route(url: "http://plain.example.com/x", provider: "corp")) { error in
            XCTAssertEqual((error as? AuthError)?.code, .originNotAllowed)
        }
    }

    /// A provider the request names must exist (1002) and cover the URL (1006); the ordering
    /// goes by the name without checking (the operation refuses).
    func testAnExplicitProviderMustCoverTheURL() throws {
        let router = makeService().router
        XCTAssertEqual(try provider(router, "https://api.example.com/x", explicit: "corp"), "corp")
        XCTAssertThrowsError(try router.route(url: "https://files.example.com/x", provider: "corp")) { error in
            XCTAssertEqual(error as? AuthError, AuthError(.originNotAllowed, "Provider corp does not cover https://files.example.com.", provider: "corp"))
        }
        XCTAssertThrowsError(try router.route(url: "not a url", provider: "corp")) { error in
            XCTAssertEqual((error as? AuthError)?.message, "Provider corp does not cover that URL.")
        }
        XCTAssertThrowsError(try router.route(url: "https://api.example.com/x", provider: "nope")) { error in
            XCTAssertEqual(error as? AuthError, AuthError(.unknownProvider, "No provider \"nope\" is configured; known: corp, files.", provider: "nope"))
        }
        XCTAssertEqual(router.provider(forURL: "https://files.example.com/x", explicit: "corp"), "corp")
    }

    /// A learned provider covers its resource's path and what lies under it — on an origin the router
    /// has already cached (learning happens at run time), and ahead of a configured provider there.
    func testLearnedPrefixesAreSeenAsSoonAsLearned() throws {
        let service = makeService()
        let router = service.router
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp/tools?x=1"), "corp")
        let mcp = learned("https://api.example.com/mcp", service)
        XCTAssertTrue(service.registry.put(mcp))
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp"), mcp.id)
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp/tools?x=1"), mcp.id)
        XCTAssertEqual(try router.route(url: "https://api.example.com/mcp/tools", provider: nil)?.shape, TokenShape.none)
        XCTAssertEqual(try provider(router, "https://api.example.com/mcpx"), "corp")
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp/x", explicit: mcp.id), mcp.id)
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp/x", explicit: "corp"), "corp")
        XCTAssertThrowsError(try router.route(url: "https://files.example.com/mcp", provider: mcp.id))
        // Forgotten: the configured origin covers it again.
        service.registry.remove(mcp.id)
        XCTAssertEqual(try provider(router, "https://api.example.com/mcp/tools"), "corp")
    }

    /// A query or fragment keeps a URL on its origin's cached route: one resolution per origin.
    func testQueryStringsUseTheCachedRoute() throws {
        let router = makeService().router
        for _ in 0..<3 {
            XCTAssertEqual(try provider(router, "https://api.example.com/v1/items?page=2"), "corp")
            XCTAssertEqual(try provider(router, "https://api.example.com/v1/items"), "corp")
            XCTAssertEqual(try provider(router, "https://api.example.com?page=3#top"), "corp")
            XCTAssertEqual(try router.route(url: "https://shaped.example.com/x?page=2", provider: nil)?.shape, Self.shaped)
        }
        XCTAssertEqual(router.originsResolved, 2)
    }
}
