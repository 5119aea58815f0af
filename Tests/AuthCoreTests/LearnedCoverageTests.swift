@testable import AuthCore
import Foundation
import JSON
import Logging
import XCTest

/// Issue 29, items 3, 4 and 6: what a learned provider covers and where learning may send the
/// agent — dot segments and encoded separators never carry a token out of a covered path; a
/// resource broader than the URL that taught it covers that URL only, until the server's own
/// 401s widen it; an API elsewhere cannot make discovery request a loopback or link-local URL,
/// and a plain `fetch` reads no metadata on another origin. All against fakes that record every
/// request: no request leaves the process.
final class LearnedCoverageTests: XCTestCase {
    // MARK: Item 3: dot segments and encoded separators

    func testDotSegmentsAndEncodedSeparatorsNeverCarryATokenOutOfALearnedPath() async throws {
        let api = FakeAPI()
        let wire = Recording(api)
        let service = makeService(wire)
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: LearningTests.playBrowser(api)))
        // The server gets the path with its dot segments removed: judged as it arrives.
        for url in ["https://api.example/mcp/../other", "https://api.example/mcp/../../tenant-b/inbox", "https://api.example/mcp/./../x",
                    "https://api.example/mcp/..", "https://api.example/mcp/..?q=/mcp", "https://api.example/mcp/..\\other"] {
            let signed = try await isSigned(service, url)
            XCTAssertFalse(signed, url)
        }
        for url in ["https://api.example/mcp/x/../y", "https://api.example/mcp/.", "https://api.example/x/../mcp/tools", "https://api.example/mcp/.well-known/x",
                    "https://api.example/mcp/a..b/%41", "https://api.example/mcp/...", "https://api.example/mcp?next=/../../other"] {
            let signed = try await isSigned(service, url)
            XCTAssertTrue(signed, url)
        }
        // Encoded dots, slashes and backslashes, in any case, under the covered path: a clear refusal.
        for url in ["https://api.example/mcp/%2e%2e/%2e%2e/tenant-b/inbox", "https://api.example/mcp/%2E%2E/other", "https://api.example/mcp/..%2Fother",
                    "https://api.example/mcp/..%2f..%2fother", "https://api.example/mcp/..%5Cother", "https://api.example/mcp/x/%2e"] {
            await assertRefused(url) { _ = try await service.sign(url: url, provider: nil) }
            await assertRefused(url) { _ = try await service.sign(url: url, provider: "api.example") }
        }
        // Naming the provider does not stretch its path either.
        await assertCode(.originNotAllowed) { _ = try await service.sign(url: "https://api.example/mcp/../other", provider: "api.example") }

        // fetch: the request that leaves the path goes out without the token; a refused one does not go out.
        let (escaping, encoded) = ("https://api.example/mcp/../../tenant-b/inbox", "https://api.example/mcp/%2e%2e/%2e%2e/tenant-b/inbox")
        let escaped = try await service.fetch(FetchRequest(method: "GET", url: escaping), provider: nil)
        XCTAssertFalse(escaped.signed)
        XCTAssertEqual(wire.sent.filter { $0.url == escaping }.map { $0.authorization != nil }, [false])
        await assertRefused("fetch") { _ = try await service.fetch(FetchRequest(method: "GET", url: encoded), provider: nil) }
        XCTAssertEqual(wire.sent.filter { $0.url == encoded }.count, 0, "the refused request was not sent")
    }

    /// The rule itself, without I/O: RFC 3986 §5.2.4's examples, the fast path's shapes, the prefixes.
    func testThePathRuleRemovesDotSegmentsAndFlagsEncodedSeparators() {
        func normalised(_ path: String) -> String {
            var path = path
            return path.withUTF8 { String(decoding: PathCoverage.removeDotSegments($0), as: UTF8.self) }
        }
        XCTAssertEqual(normalised("/a/b/c/./../../g"), "/a/g")
        XCTAssertEqual(normalised("/mid/content=5/../6"), "/mid/6")
        XCTAssertEqual(normalised("/a/b/.."), "/a/")
        XCTAssertEqual(normalised("/.."), "/")
        XCTAssertEqual(normalised("/../../x"), "/x")
        XCTAssertEqual(normalised("/a//b/./"), "/a//b/")
        XCTAssertEqual(normalised(""), "")
        func shape(_ path: String) -> PathCoverage.Shape {
            var path = path
            return path.withUTF8 { PathCoverage.shape(of: $0) }
        }
        for plain in ["/", "/mcp/x", "/.well-known/x", "/a..b", "/...", "/x.", "/%41%2", "/%2", ""] { XCTAssertEqual(shape(plain), .plain, plain) }
        for dotted in ["/.", "/..", "/a/./b", "/a/../b", "/a/.."] { XCTAssertEqual(shape(dotted), .dotSegments, dotted) }
        for encoded in ["/%2e", "/%2E%2e", "/a%2fb", "/a%2Fb", "/a%5cb", "/a%5Cb", "/a\\b", "/../%2e"] { XCTAssertEqual(shape(encoded), .encodesSeparators, encoded) }
        XCTAssertEqual(PathCoverage.prefix(of: "https://h/tenant-a/mcp/?q"), Array("/tenant-a/mcp".utf8))
        XCTAssertEqual(PathCoverage.prefix(of: "https://h"), [])
        XCTAssertEqual(PathCoverage.coveredURL("https://H:443/a/./b/../mcp?x=1#f"), "https://h/a/mcp")
        XCTAssertEqual(PathCoverage.coveredURL("http://127.0.0.1:8/"), "http://127.0.0.1:8/")
        XCTAssertEqual(PathCoverage.verdict("https://h/a/b/../../c", prefixes: [Array("/a".utf8), Array("/c".utf8)]), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://h/b/%2e%2e/a", prefixes: [Array("/a".utf8)]), .outside, "refused only where it would be covered")
    }

    // MARK: Item 4: the narrower of the resource and the URL that taught it

    func testARootResourceLearnedFromOneTenantCoversThatTenantUntilTheServerNamesItForAnother() async throws {
        let api = FakeAPI()
        let wire = Recording(api, tenants: true)
        let store = MemorySessionStore()
        let service = makeService(wire, store: store)
        let context = LoginContext(prompt: LearningTests.playBrowser(api))
        let a = try await service.fetch(FetchRequest(method: "GET", url: Recording.tenantA + "?x=1"), provider: nil, login: .ifNeeded, context: context)
        XCTAssertEqual(a.status, 200)
        XCTAssertEqual(a.provider, "api.example")
        // The token's audience is the resource the server named (RFC 8707), the root; the token goes to tenant A only.
        XCTAssertEqual(api.lastForm("/token")["resource"], "https://api.example/")
        let bSigned = try await isSigned(service, Recording.tenantB)
        XCTAssertFalse(bSigned, "tenant B's URL gets no token of tenant A's")
        XCTAssertEqual(try storedCovers(store), [Recording.tenantA])

        // A plain fetch of tenant B goes out unsigned and says what to log in to.
        wire.reset()
        let plain = try await service.fetch(FetchRequest(method: "GET", url: Recording.tenantB), provider: nil)
        XCTAssertEqual(plain.status, 401)
        XCTAssertFalse(plain.signed)
        XCTAssertEqual(wire.sent.first.map { $0.authorization != nil }, false)
        // B's own 401 names the same resource and server: B is covered too, with no new registration or login.
        let again = try await service.fetch(FetchRequest(method: "GET", url: Recording.tenantB), provider: nil, login: .ifNeeded, context: context)
        XCTAssertEqual(again.status, 200)
        XCTAssertEqual(again.provider, "api.example")
        XCTAssertEqual(api.count("/register"), 1)
        XCTAssertEqual(api.count("/token"), 1)
        XCTAssertEqual(try storedCovers(store), [Recording.tenantA, Recording.tenantB])
        XCTAssertEqual(service.status().first?.learned?.coverage, [Recording.tenantA, Recording.tenantB])
        let (b42, c) = (try await isSigned(service, Recording.tenantB + "/42"), try await isSigned(service, "https://api.example/tenant-c/mcp"))
        XCTAssertTrue(b42)
        XCTAssertFalse(c, "tenant C is not covered")
        // Another process on the store covers what this one does, and no more.
        let second = makeService(wire, store: store)
        XCTAssertTrue(second.covers(url: Recording.tenantA + "/x"))
        XCTAssertTrue(second.covers(url: Recording.tenantB))
        XCTAssertFalse(second.covers(url: "https://api.example/tenant-c/mcp"))
        XCTAssertFalse(second.covers(url: "https://api.example/"))
    }

    /// A learned API kept by an older version has no `covers`: it covers its resource, as it did.
    func testAnOlderLearnedDocumentWithoutCoversCoversItsResource() throws {
        let store = MemorySessionStore()
        let old = #"""
            {"version": 1, "apis": [{"id": "api.example", "resource": "https://api.example/mcp", "scopes": ["mcp"], "dpop": false,
              "server": {"issuer": "https://as.example", "tokenEndpoint": "https://as.example/token", "sendsIss": true,
                         "clientMetadataDocuments": false, "dpopES256": false, "authorizationEndpoint": "https://as.example/authorize"}}],
             "clients": {"https://as.example": {"clientId": "dyn-1", "scopes": ["mcp"], "registered": true}}}
            """#
        try store.saveDocument(Array(old.utf8), key: StoreKeys.learned)
        let service = makeService(Recording(FakeAPI()), store: store)
        XCTAssertTrue(service.covers(url: "https://api.example/mcp"))
        XCTAssertTrue(service.covers(url: "https://api.example/mcp/tools"))
        XCTAssertFalse(service.covers(url: "https://api.example/other"))
    }

    func testCoveredURLsAreKeptInTheDocumentAndOnlyThoseUnderTheResourceCount() throws {
        let server = AuthorizationServer(issuer: "https://as.example", tokenEndpoint: "https://as.example/token", sendsIss: false, acceptsClientMetadataDocuments: false)
        var doc = LearnedDocument()
        doc.apis = [LearnedAPI(id: "api.example", resource: "https://api.example/", coverage: [Recording.tenantA, "https://other.example/x", Recording.tenantB],
                               server: server, scopes: [])]
        doc.clients[server.issuer] = LearnedClient(clientId: "c", clientSecret: nil, redirectPort: nil, scopes: [], registered: true)
        XCTAssertEqual(LearnedDocument.decode(doc.encoded()), doc)
        let learned = try XCTUnwrap(doc.config(doc.apis[0], defaultOpenBrowser: false)?.learned)
        XCTAssertEqual(learned.coverage, [Recording.tenantA, Recording.tenantB])
        XCTAssertTrue(learned.covers(Recording.tenantA + "/x"))
        XCTAssertFalse(learned.covers("https://api.example/tenant-c"))
        // Nothing under the resource: no provider, rather than a guess.
        doc.apis[0].coverage = ["https://other.example/x"]
        XCTAssertNil(doc.config(doc.apis[0], defaultOpenBrowser: false))
    }

    // MARK: Item 6: loopback and link-local targets, cross-origin metadata

    func testARemoteAPIsPlainFetchRequestsNoLoopbackURL() async throws {
        let wire = Recording.remote(challenge: #"Bearer resource_metadata="http://127.0.0.1:9/admin/purge?confirm=yes""#)
        let service = makeService(wire)
        let answer = try await service.fetch(FetchRequest(method: "GET", url: Recording.remoteAPI), provider: nil)
        XCTAssertEqual(answer.status, 401)
        XCTAssertEqual(wire.sent.map(\.url), [Recording.remoteAPI], "nothing but the request itself")
        XCTAssertEqual(answer.login?.resourceMetadata, "http://127.0.0.1:9/admin/purge?confirm=yes")
        XCTAssertNil(answer.login?.authorizationServer)
    }

    func testARemoteAPICannotDirectDiscoveryToALocalAddress() async throws {
        let local = ["http://127.0.0.1:9", "http://localhost:9", "http://[::1]:9", "https://169.254.169.254", "https://[fe80::1]", "http://0.0.0.0:9"]
        for target in local {
            // The challenge's metadata URL; then the issuer in the resource metadata; then the server's endpoints.
            let cases: [(Recording, LearningStep)] = [
                (Recording.remote(challenge: #"Bearer resource_metadata="\#(target)/meta""#), .resourceMetadata),
                (Recording.remote(challenge: "Bearer", issuer: target), .serverMetadata),
                (Recording.remote(challenge: "Bearer", endpoints: target), .serverMetadata),
            ]
            for (wire, step) in cases {
                let service = makeService(wire)
                await assertCode(.discoveryFailed, step: step, target) {
                    _ = try await service.fetch(FetchRequest(method: "GET", url: Recording.remoteAPI), provider: nil, login: .ifNeeded)
                }
                XCTAssertEqual(wire.sent.filter { Origin(url: $0.url) == Origin(url: target) }.map(\.url), [], "\(target) \(step)")
            }
        }
    }

    /// The decision the loopback rule rests on, from the host's text alone.
    func testLocalAddressesAreLoopbackLinkLocalAndUnspecified() {
        for host in ["localhost", "localhost.", "api.localhost", "127.0.0.1", "127.9.9.9", "0.0.0.0", "169.254.169.254", "[::1]", "[::]",
                     "[fe80::1]", "[febf::1]", "[::ffff:127.0.0.1]", "[::ffff:169.254.1.1]"] {
            XCTAssertTrue(Origin.isLocal(host: host), host)
        }
        for host in ["api.example.test", "10.0.0.1", "192.168.1.1", "169.255.0.1", "126.0.0.1", "[2001:db8::1]", "[fec0::1]", "[fe8::1]",
                     "[::ffff:10.0.0.1]", "localhost.example.com", "notlocalhost"] {
            XCTAssertFalse(Origin.isLocal(host: host), host)
        }
        XCTAssertEqual(Origin(url: "http://[0:0:0:0:0:0:0:1]:8")?.isLocalAddress, true)
    }

    func testMetadataOnAnotherOriginIsReadOnlyForALoginAskedFor() async throws {
        let resource = "http://127.0.0.1:8001/mcp", metadata = "http://127.0.0.1:8002/.well-known/oauth-protected-resource/mcp"
        let wire = Recording { request in
            request.url == resource ? HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer scope="mcp", resource_metadata="\#(metadata)""#])
                                    : HTTPResponse(status: 404)
        }
        let service = makeService(wire)
        let plain = try await service.fetch(FetchRequest(method: "GET", url: resource), provider: nil)
        XCTAssertEqual(plain.status, 401)
        XCTAssertEqual(wire.sent.map(\.url), [resource], "the other origin's metadata is not read")
        XCTAssertEqual(plain.login, LoginHint(resource: resource, authorizationServer: nil, scopes: ["mcp"], resourceMetadata: metadata))
        // Asked to log in, the agent reads it (here it is missing: nothing is learned).
        await assertCode(.discoveryFailed, step: .resourceMetadata, "ifNeeded") {
            _ = try await service.fetch(FetchRequest(method: "GET", url: resource), provider: nil, login: .ifNeeded)
        }
        XCTAssertTrue(wire.sent.contains { $0.url == metadata })
    }

    // MARK: Helpers

    private func makeService(_ transport: HTTPTransport, store: SessionStore = MemorySessionStore()) -> AuthService {
        AuthService(config: AgentConfig(), store: store, transport: transport, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
    }

    /// Whether `sign` attaches a token to `url` (the signature itself is never printed).
    private func isSigned(_ service: AuthService, _ url: String) async throws -> Bool {
        if case .signed = try await service.sign(url: url, provider: nil) { return true }
        return false
    }

    /// The `covers` of the one API in the stored learned document.
    private func storedCovers(_ store: SessionStore) throws -> [String]? {
        let bytes = try XCTUnwrap(try store.loadDocument(StoreKeys.learned))
        return try JSONParser.parse(bytes)["apis"]?.arrayValue?.first?["covers"]?.arrayValue?.compactMap(\.stringValue)
    }

    private func assertRefused(_ label: String, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async {
        await assertCode(.originNotAllowed, label, file: file, line: line, body)
    }

    private func assertCode(_ code: AuthErrorCode, step: LearningStep? = nil, _ label: String = "", file: StaticString = #filePath, line: UInt = #line,
                            _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("no error: \(label)", file: file, line: line)
        } catch let e as AuthError {
            XCTAssertEqual(e.code, code, "\(label): \(e.message)", file: file, line: line)
            if let step { XCTAssertEqual(e.step, step.rawValue, "\(label): \(e.message)", file: file, line: line) }
        } catch {
            XCTFail("\(label): \(error)", file: file, line: line)
        }
    }
}

/// A transport that records every request (its URL and `Authorization`) and answers with `answer`:
/// `FakeAPI` by default, with tenants under a root resource, or an API on a made-up non-loopback origin.
final class Recording: HTTPTransport, @unchecked Sendable {
    static let tenantA = "https://api.example/tenant-a/mcp", tenantB = "https://api.example/tenant-b/inbox"
    static let remoteAPI = "https://api.example.test/data"
    private let lock = NSLock()
    private var log: [(url: String, authorization: String?)] = []
    private let answer: @Sendable (HTTPRequest) async throws -> HTTPResponse

    init(_ answer: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.answer = answer }

    /// `api`; with `tenants`, `/tenant-*` paths protected by the resource `https://api.example/` (the origin's root).
    convenience init(_ api: FakeAPI, tenants: Bool = false) {
        self.init { request in
            guard tenants, let url = URL(string: request.url), url.host == "api.example" else { return try await api.send(request) }
            if url.path == "/.well-known/oauth-protected-resource" {
                return FakeAPI.json(200, ["resource": "https://api.example/", "authorization_servers": [.string(FakeAPI.issuer)], "scopes_supported": ["mcp"]])
            }
            guard url.path.hasPrefix("/tenant-") else { return try await api.send(request) }
            if request.headers.contains(where: { $0.0.lowercased() == "authorization" && $0.1 == "Bearer at-1" }) { return FakeAPI.json(200, ["ok": true]) }
            return HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer resource_metadata="https://api.example/.well-known/oauth-protected-resource""#])
        }
    }

    /// `remoteAPI` answering 401 with `challenge`; its metadata (same origin) names `issuer`, whose
    /// metadata (at `issuer`) names its endpoints at `endpoints`.
    static func remote(challenge: String, issuer: String = "https://as.example.test", endpoints: String? = nil) -> Recording {
        Recording { request in
            let url = request.url
            if url == remoteAPI { return HTTPResponse(status: 401, headers: ["WWW-Authenticate": challenge]) }
            if url.hasPrefix("https://api.example.test/.well-known/oauth-protected-resource") {
                return FakeAPI.json(200, ["resource": .string(remoteAPI), "authorization_servers": [.string(issuer)]])
            }
            if url.hasPrefix(issuer + "/.well-known/") {
                let at = endpoints ?? issuer
                return FakeAPI.json(200, ["issuer": .string(issuer), "authorization_endpoint": .string(issuer + "/authorize"), "code_challenge_methods_supported": ["S256"],
                                          "token_endpoint": .string(at + "/token"), "registration_endpoint": .string(at + "/register")])
            }
            return HTTPResponse(status: 404)
        }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorization = request.headers.first { $0.0.lowercased() == "authorization" }?.1
        lock.withLock { log.append((request.url, authorization)) }
        return try await answer(request)
    }

    var sent: [(url: String, authorization: String?)] { lock.withLock { log } }
    func reset() { lock.withLock { log = [] } }
}
