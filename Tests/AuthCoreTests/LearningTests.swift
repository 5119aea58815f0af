@testable import AuthCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import JSONRPC
import Locking
import Logging
import XCTest

/// Issue 22 against fakes: the challenge parser, discovery's order and refusals (each a 1014
/// with its step), the learned document, and a whole learn → login → second process over a
/// fake resource and authorization server, the browser played by the test.
final class LearningTests: XCTestCase {
    // MARK: Challenge parser

    func testChallengeParserReadsTheBearerChallengeAmongSeveral() {
        let c = BearerChallenge.parse(#"Basic realm="x", BEARER Realm="a \"q\" b", Scope="read  write", resource_metadata="https://r.example/.well-known/oauth-protected-resource/mcp", error=invalid_token"#)
        XCTAssertEqual(c, BearerChallenge(resourceMetadata: "https://r.example/.well-known/oauth-protected-resource/mcp", scopes: ["read", "write"], error: "invalid_token"))
    }

    func testChallengeParserSkipsToken68AndUnknownSchemesAndSurvivesGarbage() {
        XCTAssertEqual(BearerChallenge.parse(#"Negotiate YII==, Bearer error="insufficient_scope", scope="mcp admin""#),
                       BearerChallenge(scopes: ["mcp", "admin"], error: "insufficient_scope"))
        XCTAssertNil(BearerChallenge.parse(#"Digest realm="x", nonce="y""#))
        XCTAssertEqual(BearerChallenge.parse("Bearer"), BearerChallenge())
        XCTAssertEqual(BearerChallenge.parse(#"Bearer scope="unterminated"#), BearerChallenge())
        XCTAssertEqual(BearerChallenge.parse(#"Bearer scope=a ;;; garbage"#), BearerChallenge(scopes: ["a"]))
        XCTAssertNil(BearerChallenge.parse(#"=,,"==""#))
        XCTAssertEqual(BearerChallenge.parse([#"Basic realm="x""#, #"Bearer resource_metadata="https://a/m""#])?.resourceMetadata, "https://a/m")
        // The first of a repeated parameter wins, whatever its case.
        XCTAssertEqual(BearerChallenge.parse(#"Bearer SCOPE=a, scope=b"#)?.scopes, ["a"])
    }

    // MARK: Coverage and ids

    func testAResourceCoversItsPathAtASegmentBoundary() {
        XCTAssertTrue(PathCoverage.covers(resource: "https://a.example/mcp", url: "https://a.example/mcp"))
        XCTAssertTrue(PathCoverage.covers(resource: "https://a.example/mcp", url: "https://a.example/mcp/x?y=1"))
        XCTAssertFalse(PathCoverage.covers(resource: "https://a.example/mcp", url: "https://a.example/mcpx"))
        XCTAssertFalse(PathCoverage.covers(resource: "https://a.example/mcp", url: "https://a.example:444/mcp"))
        XCTAssertTrue(PathCoverage.covers(resource: "https://a.example/", url: "https://a.example/anything"))
        // Routing goes by the same rule: a prefix of the path (after the authority) at a segment boundary.
        let mcp = [Array("/mcp".utf8)]
        XCTAssertEqual(PathCoverage.verdict("https://a.example/mcp", prefixes: mcp), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://a.example:8443/mcp/x", prefixes: mcp), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://a.example/mcp?x=/y", prefixes: mcp), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://a.example/mcpx", prefixes: mcp), .outside)
        XCTAssertEqual(PathCoverage.verdict("https://a.example/m", prefixes: mcp), .outside)
        XCTAssertEqual(PathCoverage.verdict("https://a.example?/mcp", prefixes: mcp), .outside)
        XCTAssertEqual(PathCoverage.verdict("https://a.example", prefixes: [[]]), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://a.example/x", prefixes: [[]]), .covered)
        XCTAssertEqual(Discovery.wellKnown("https://a.example/mcp", "oauth-protected-resource"),
                       ["https://a.example/.well-known/oauth-protected-resource/mcp", "https://a.example/.well-known/oauth-protected-resource"])
        XCTAssertEqual(Discovery.serverCandidates("https://as.example/tenant"),
                       ["https://as.example/.well-known/oauth-authorization-server/tenant", "https://as.example/.well-known/openid-configuration/tenant",
                        "https://as.example/tenant/.well-known/openid-configuration"])
        XCTAssertEqual(Discovery.serverCandidates("http://127.0.0.1:8/"),
                       ["http://127.0.0.1:8/.well-known/oauth-authorization-server", "http://127.0.0.1:8/.well-known/openid-configuration"])
    }

    func testLearnedIdsAreTheHostThenThePortThenThePath() {
        var doc = LearnedDocument()
        XCTAssertEqual(doc.id(for: "https://api.example.com/mcp"), "api.example.com")
        XCTAssertEqual(doc.id(for: "http://127.0.0.1:8123/mcp"), "127.0.0.1-8123")
        let server = AuthorizationServer(issuer: "https://as", tokenEndpoint: "https://as/token", sendsIss: false, acceptsClientMetadataDocuments: false)
        doc.apis = [LearnedAPI(id: "api.example.com", resource: "https://api.example.com/mcp", server: server, scopes: [])]
        XCTAssertEqual(doc.id(for: "https://api.example.com/mcp"), "api.example.com")
        XCTAssertEqual(doc.id(for: "https://api.example.com/other/v1"), "api.example.com-other-v1")
        doc.clients["https://as"] = LearnedClient(clientId: "c", clientSecret: nil, redirectPort: 5000, scopes: ["a"], registered: true)
        XCTAssertEqual(LearnedDocument.decode(doc.encoded()), doc)
    }

    func testLearnAllowMatchesOriginsAndSubdomains() {
        let allow = LearnAllowList(["https://*.example.com", "http://127.0.0.1:9000"])
        XCTAssertTrue(allow.allows("https://api.example.com/x"))
        XCTAssertFalse(allow.allows("https://example.com/x"))
        XCTAssertFalse(allow.allows("http://api.example.com/x"))
        XCTAssertTrue(allow.allows("http://127.0.0.1:9000/mcp"))
        XCTAssertFalse(allow.allows("http://127.0.0.1:9001/mcp"))
    }

    // MARK: Discovery refusals

    func testDiscoveryFollowsMCPOrderAndChecksTheResource() async throws {
        let server = FakeAPI()
        let d = ResourceDiscovery(documents: Discovery(http: HTTPCalls(transport: server, timeout: 5)), learning: FakeAPI.resource)
        // No challenge: path-inserted form first; the fake serves only the root form.
        server.pathMetadata = false
        let r = try await d.resource(for: FakeAPI.resource, challenge: nil, exact: true)
        XCTAssertEqual(r.resource, FakeAPI.resource)
        XCTAssertEqual(server.paths(), ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"])
        // fetch: a URL under the resource is fine, `login {resource}` must be identical.
        _ = try await d.resource(for: FakeAPI.resource + "/tools", challenge: nil, exact: false)
        await assertStep(.resourceMetadata, "describes https://api.example/mcp, not https://api.example/mcp/tools") {
            _ = try await d.resource(for: FakeAPI.resource + "/tools", challenge: nil, exact: true)
        }
    }

    func testEachDiscoveryRefusalIs1014WithItsStep() async throws {
        let cases: [(String, LearningStep, String)] = [
            ("wrong-resource", .resourceMetadata, "describes https://elsewhere.example/mcp"),
            ("big-resource", .resourceMetadata, "larger than 256 KiB"),
            ("redirect", .resourceMetadata, "redirects to another origin"),
            ("wrong-issuer", .serverMetadata, "names the issuer https://attacker.example"),
            ("insecure", .serverMetadata, "token_endpoint of https://as.example (http://as.example/token) is not https"),
            // Issue 33 item 4 (MCP 2025-11-25): no S256 in code_challenge_methods_supported, no browser login.
            ("no-pkce", .serverMetadata, "does not list S256 in code_challenge_methods_supported"),
            ("no-registration", .registration, "add one to the configuration's \"clients\""),
            ("refuse-registration", .registration, "refused the registration with HTTP 400 (invalid_client_metadata)"),
            ("no-client-id", .registration, "has no client_id"),
        ]
        for (fault, step, message) in cases {
            let server = FakeAPI()
            server.fault = fault
            let (service, _) = makeService(server)
            await assertStep(step, message) { _ = try await service.login(resource: FakeAPI.resource) }
            XCTAssertTrue(service.status().isEmpty, fault)
            XCTAssertEqual(server.count("/token"), 0, fault)
        }
    }

    // MARK: Whole learn

    func testLearnRegistersLogsInAndASecondProcessUsesItWithoutDiscovery() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        let (service, _) = makeService(server, store: store)
        let result = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(result.provider, "api.example")
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.lastForm("/token")["resource"], FakeAPI.resource)
        XCTAssertEqual(server.authorizeQuery?["resource"], FakeAPI.resource)
        XCTAssertEqual(server.authorizeQuery?["scope"], "mcp")
        XCTAssertEqual(server.registration?["scope"]?.stringValue, "mcp")
        XCTAssertEqual(server.registration?["token_endpoint_auth_method"]?.stringValue, "none")
        let status = service.status()
        XCTAssertEqual(status.map(\.id), ["api.example"])
        XCTAssertEqual(status.first?.learned?.issuer, FakeAPI.issuer)
        // Covered now: signing needs no discovery; another URL on the host is not covered.
        let sign = try await service.sign(url: FakeAPI.resource + "/x", provider: nil)
        guard case .signed(let signature) = sign else { return XCTFail("not signed") }
        XCTAssertEqual(signature.provider, "api.example")
        XCTAssertFalse(service.covers(url: "https://api.example/other"))

        // A second process on the same store: it knows the provider and its session, and asks nothing.
        server.resetLog()
        let (second, _) = makeService(server, store: store)
        XCTAssertTrue(second.covers(url: FakeAPI.resource))
        _ = try await second.token(provider: "api.example")
        XCTAssertEqual(server.paths(), [])

        // forget: logged out, dropped, the registration deleted; the other process follows.
        let revoked = try await service.forget(provider: "api.example")
        XCTAssertFalse(revoked)  // the fake has no revocation endpoint
        XCTAssertFalse(service.covers(url: FakeAPI.resource))
        second.checkStore()
        XCTAssertFalse(second.covers(url: FakeAPI.resource))
        XCTAssertNil(try store.loadDocument(StoreKeys.learned))
    }

    /// Issue 31 item 2: every registration says `application_type: native`; one refused for its
    /// `scope` (`invalid_client_metadata`) is tried once with the scopes the server lists, then without.
    func testARegistrationRefusedForItsScopeIsRetriedWithTheServersScopesThenWithout() async throws {
        XCTAssertEqual(ClientRegistration.scopeFallbacks(asked: ["mcp", "profile"], listed: ["profile", "email"]), [["profile"], []])
        XCTAssertEqual(ClientRegistration.scopeFallbacks(asked: ["mcp"], listed: ["profile"]), [[]])
        XCTAssertEqual(ClientRegistration.scopeFallbacks(asked: ["profile"], listed: ["profile"]), [[]], "the same scopes again would be refused again")
        XCTAssertEqual(ClientRegistration.scopeFallbacks(asked: [], listed: ["profile"]), [], "no scope asked: nothing to drop")

        let server = FakeAPI()
        server.fault = "strict-scope"
        let (service, _) = makeService(server, store: MemorySessionStore())
        let result = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(result.provider, "api.example")
        XCTAssertEqual(server.count("/register"), 2, "asked for mcp (refused), then without scope: \(server.paths())")
        XCTAssertNil(server.registration?["scope"], "the second registration names no scope")
        XCTAssertEqual(server.registration?["application_type"], "native")
    }

    /// A registration refused for naming RFC 8628's device grant (Glewlwyd 2.7.5 wants its own name for it,
    /// though its metadata lists RFC 8628's) is asked once more without it, scope unchanged; every
    /// registration says `client_confidential: false`, without which Glewlwyd takes the agent for a
    /// confidential client and refuses its code grant.
    func testARegistrationRefusedForTheDeviceGrantIsRetriedWithoutIt() async throws {
        let server = FakeAPI()
        server.fault = "device-grant"
        let (service, _) = makeService(server, store: MemorySessionStore())
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(server.count("/register"), 2, "\(server.paths())")
        XCTAssertEqual(server.registration?["grant_types"], ["authorization_code", "refresh_token"])
        XCTAssertEqual(server.registration?["scope"], "mcp", "the scope was not what was refused")
        XCTAssertEqual(server.registration?["client_confidential"], false)
    }

    /// Issue 31 item 2 (MCP 2026-07-28): `offline_access` is asked for — at registration and login —
    /// when the authorization server lists it, and only then.
    func testOfflineAccessIsAskedForWhenTheServerListsIt() async throws {
        for (fault, expected) in [("offline", "mcp offline_access"), ("", "mcp")] {
            let server = FakeAPI()
            server.fault = fault
            let (service, _) = makeService(server, store: MemorySessionStore())
            _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
            XCTAssertEqual(server.authorizeQuery?["scope"]?.replacingOccurrences(of: "+", with: " "), expected, fault)
            XCTAssertEqual(server.registration?["scope"]?.stringValue, expected, fault)
        }
    }

    /// Issue 31 item 2: a learned login at a server that refuses `resource` at its token endpoint
    /// succeeds by asking once more without it; the refresh after it, and the next login, do not send it.
    func testALearnedLoginAtAServerRefusingResourceAsksAgainWithoutIt() async throws {
        let server = FakeAPI()
        server.fault = "refuse-resource"
        let lines = Locked<[String]>([])
        let store = MemorySessionStore()
        let service = AuthService(config: AgentConfig(), store: store, transport: server,
                                  logger: Logger(level: .debug, sink: { line in lines.withLock { $0.append(line) } }), events: { _ in })
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(server.count("/token"), 2, "refused with resource, granted without")
        _ = try await service.refresh(provider: "api.example", failedAuthorization: nil)
        XCTAssertEqual(server.count("/token"), 3, "the refresh leaves it out at once")
        XCTAssertNil(server.lastForm("/token")["resource"])
        XCTAssertEqual(lines.withLock { $0 }.filter { $0.contains("refused the resource parameter") }.count, 1, "\(lines.withLock { $0 })")

        // Remembered per issuer in the store: another process (a one-shot helper) leaves it out from its first request.
        let (other, _) = makeService(server, store: store)
        _ = try await other.refresh(provider: "api.example", failedAuthorization: nil)
        XCTAssertEqual(server.count("/token"), 4, "no refused request first")
        XCTAssertNil(server.lastForm("/token")["resource"])
    }

    func testAMismatchedIssOnTheAuthorizationResponseIsRefused() async throws {
        let server = FakeAPI()
        server.iss = "https://attacker.example"
        let (service, _) = makeService(server)
        await assertStep(.login, "names the issuer https://attacker.example") {
            _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        }
        XCTAssertTrue(service.status().isEmpty)
        XCTAssertEqual(server.count("/token"), 0)
    }

    // MARK: Helpers

    func makeService(_ server: FakeAPI, store: SessionStore = MemorySessionStore()) -> (AuthService, SessionStore) {
        (AuthService(config: AgentConfig(), store: store, transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in }), store)
    }

    private func assertStep(_ step: LearningStep, _ message: String, file: StaticString = #filePath, line: UInt = #line,
                            _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("no error", file: file, line: line)
        } catch let e as AuthError {
            XCTAssertEqual(e.code, .discoveryFailed, e.message, file: file, line: line)
            XCTAssertEqual(e.step, step.rawValue, e.message, file: file, line: line)
            XCTAssertTrue(e.message.contains(message), e.message, file: file, line: line)
        } catch {
            XCTFail("\(error)", file: file, line: line)
        }
    }

    /// Plays the person: reads the authorization URL and sends the browser to the agent's redirect with a code.
    static func playBrowser(_ server: FakeAPI) -> @Sendable (LoginPrompt, LoginTarget) -> Void {
        { prompt, _ in
            guard case .browser(let url, _) = prompt, let components = URLComponents(string: url) else { return }
            var query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
            server.authorized(query)
            if query["request_uri"] != nil { query = server.lastForm("/par") }
            var back = URLComponents(string: query["redirect_uri"]!)!
            back.queryItems = [URLQueryItem(name: "code", value: "the-code"), URLQueryItem(name: "state", value: query["state"])]
            if let iss = server.iss { back.queryItems?.append(URLQueryItem(name: "iss", value: iss)) }
            let target = back.url!
            Task.detached { _ = try? await URLSession.shared.data(from: target) }
        }
    }
}

/// A protected resource `https://api.example/mcp` and its authorization server `https://as.example`
/// (RFC 9728 and RFC 8414 metadata, RFC 7591 registration, a token endpoint), with one `fault` at a time.
final class FakeAPI: HTTPTransport, @unchecked Sendable {
    static let resource = "https://api.example/mcp"
    static let issuer = "https://as.example"
    static let otherIssuer = "https://as2.example"
    /// The authorization server the resource's metadata names.
    var namedIssuer = FakeAPI.issuer
    private let lock = NSLock()
    var fault = ""
    var pathMetadata = true
    var iss: String? = FakeAPI.issuer
    /// The server metadata's `dpop_signing_alg_values_supported` (absent when nil).
    var dpopAlgs: [String]?
    /// Clients the token endpoint answers `invalid_client` (a registration the server lost), the
    /// authorization endpoint an error page (FastMCP's 400 `invalid_request`) and RFC 7592 reads 401.
    var unknownClients: Set<String> = []
    /// Refresh tokens the token endpoint refuses with `invalid_grant`.
    var deadRefreshTokens: Set<String> = []
    /// The access token the token endpoint issues and the API accepts (a restarted server knows only its new ones).
    var accessToken = "at-1"
    /// Registrations answer RFC 7592 `registration_client_uri` and `registration_access_token`.
    var managesRegistrations = false
    /// Who requires pushed authorization requests: "metadata", "registration", or nobody ("").
    var requiresPAR = ""
    private var registered = 0
    private var log: [(path: String, form: [String: String])] = []
    private(set) var authorizeQuery: [String: String]?
    private(set) var registration: JSONObject?

    func paths() -> [String] { lock.withLock { log.map(\.path) } }
    func count(_ path: String) -> Int { lock.withLock { log.filter { $0.path == path }.count } }
    func lastForm(_ path: String) -> [String: String] { lock.withLock { log.last { $0.path == path }?.form ?? [:] } }
    func resetLog() { lock.withLock { log = [] } }
    func authorized(_ query: [String: String]) { lock.withLock { authorizeQuery = query } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let url = URL(string: request.url)!
        let body = String(decoding: request.body ?? [], as: UTF8.self)
        let form = Dictionary(body.split(separator: "&").map { pair -> (String, String) in
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
            return (parts[0], parts.count > 1 ? parts[1] : "")
        }, uniquingKeysWith: { $1 })
        // `as2.example` is the first server's twin (its paths logged under "/as2"): where a resource may move.
        let twin = url.host == "as2.example"
        let server = twin ? Self.otherIssuer : Self.issuer
        lock.withLock { log.append(((twin ? "/as2" : "") + url.path, form)) }
        switch (twin ? "as.example" : url.host ?? "", url.path) {
        case ("api.example", "/.well-known/oauth-protected-resource/mcp") where pathMetadata, ("api.example", "/.well-known/oauth-protected-resource"):
            if fault == "big-resource" { throw HTTPTransportError.responseTooLarge }
            if fault == "redirect" { return HTTPResponse(status: 302, headers: ["Location": "https://evil.example/meta"]) }
            let resource = fault == "wrong-resource" ? "https://elsewhere.example/mcp" : Self.resource
            return Self.json(200, ["resource": .string(resource), "authorization_servers": [.string(namedIssuer)], "scopes_supported": ["mcp"]])
        case ("as.example", "/.well-known/oauth-authorization-server"):
            var m: JSONObject = ["issuer": .string(fault == "wrong-issuer" ? "https://attacker.example" : server),
                                 "authorization_endpoint": .string(server + "/authorize"),
                                 "token_endpoint": .string(fault == "insecure" ? "http://as.example/token" : server + "/token"),
                                 "authorization_response_iss_parameter_supported": true]
            if fault != "no-pkce" { m["code_challenge_methods_supported"] = ["S256"] }
            if fault == "strict-scope" { m["scopes_supported"] = ["profile"] }
            if fault == "offline" { m["scopes_supported"] = ["mcp", "offline_access"] }
            if fault == "device-grant" { m["device_authorization_endpoint"] = .string(server + "/device") }
            if fault != "no-registration" { m["registration_endpoint"] = .string(server + "/register") }
            if let dpopAlgs { m["dpop_signing_alg_values_supported"] = .array(dpopAlgs.map(JSONValue.string)) }
            m["pushed_authorization_request_endpoint"] = .string(server + "/par")
            m["require_pushed_authorization_requests"] = .bool(requiresPAR == "metadata")
            return Self.json(200, m)
        case ("as.example", "/par"):
            return Self.json(201, ["request_uri": "urn:ietf:params:oauth:request_uri:fake", "expires_in": 60])
        case ("as.example", "/register"):
            lock.withLock { registration = (try? JSONParser.parse(request.body ?? []))?.objectValue }
            if fault == "refuse-registration" { return Self.json(400, ["error": "invalid_client_metadata"]) }
            if fault == "no-client-id" { return Self.json(201, ["client_name": "auth-agent"]) }
            // Glewlwyd 2.7.5 (its protocol_oidc.c): RFC 8628's grant type is refused in a registration, in these words.
            if fault == "device-grant", registration?["grant_types"]?.arrayValue?.contains("urn:ietf:params:oauth:grant-type:device_code") == true {
                return Self.json(400, ["error": "invalid_client_metadata", "error_description": "grant_types must have one of the following values: 'authorization_code', 'implicit', 'password', 'client_credentials', 'refresh_token', 'delete_token', 'device_authorization', 'urn:openid:params:grant-type:ciba'"])
            }
            // A certified server's habit: a `scope` with a value its metadata does not list is refused.
            if fault == "strict-scope", let asked = registration?["scope"]?.stringValue, asked.split(separator: " ").contains(where: { $0 != "profile" }) {
                return Self.json(400, ["error": "invalid_client_metadata", "error_description": "scope not allowed"])
            }
            let id = lock.withLock { registered += 1; return (twin ? "as2-" : "") + "dyn-\(registered)" }
            var answer: JSONObject = ["client_id": .string(id), "token_endpoint_auth_method": "none",
                                      "require_pushed_authorization_requests": .bool(requiresPAR == "registration")]
            if managesRegistrations {
                (answer["registration_client_uri"], answer["registration_access_token"]) = (.string("https://as.example/register/" + id), .string("rat-" + id))
            }
            return Self.json(201, answer)
        case ("as.example", let path) where path.hasPrefix("/register/"):
            return unknownClients.contains(String(path.dropFirst("/register/".count))) ? Self.json(401, ["error": "invalid_token"]) : Self.json(200, [:])
        case ("as.example", "/authorize"):
            let clientId = URLComponents(string: request.url)?.queryItems?.first { $0.name == "client_id" }?.value ?? ""
            if unknownClients.contains(clientId) { return Self.json(400, ["error": "invalid_request", "error_description": .string("Client ID '\(clientId)' not found")]) }
            // A server that takes pushed requests only refuses a plain one, whoever the client (Glewlwyd: 403).
            if requiresPAR == "metadata", URLComponents(string: request.url)?.queryItems?.contains(where: { $0.name == "request_uri" }) != true {
                return Self.json(403, ["error": "invalid_request", "error_description": "pushed authorization requests only"])
            }
            return HTTPResponse(status: 302, headers: ["Location": server + "/login"])
        case ("api.example", let path) where path == "/mcp" || path.hasPrefix("/mcp/"):
            let authorization = request.headers.first { $0.0.lowercased() == "authorization" }?.1
            if authorization == "Bearer \(accessToken)" || authorization == "DPoP \(accessToken)" { return Self.json(200, ["ok": true]) }
            return HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer scope="mcp", resource_metadata="https://api.example/.well-known/oauth-protected-resource/mcp""#])
        case ("as.example", "/token") where fault == "refuse-resource" && form["resource"] != nil:
            // As Entra ID answers since 2026 (vscode#321249): the parameter refused, whatever the grant.
            return Self.json(400, ["error": "invalid_request", "error_description": "AADSTS9010010: The resource parameter provided in the request doesn't match with the requested scopes."])
        case ("as.example", "/token") where deadRefreshTokens.contains(form["refresh_token"] ?? "-"):
            return Self.json(400, ["error": "invalid_grant"])
        case ("as.example", "/token") where unknownClients.contains(form["client_id"] ?? ""):
            return Self.json(401, ["error": "invalid_client"])
        case ("as.example", "/token"):
            // A token request with a proof gets a bound token, as RFC 9449 servers answer.
            let proven = request.headers.contains { $0.0.lowercased() == "dpop" }
            return Self.json(200, ["access_token": .string(accessToken), "token_type": .string(proven ? "DPoP" : "Bearer"), "expires_in": 3600,
                                   "refresh_token": "rt-1", "scope": "mcp"])
        default:
            return HTTPResponse(status: 404)
        }
    }

    static func json(_ status: Int, _ object: JSONObject) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONSerializer.bytes(.object(object)))
    }
}

extension LearningTests {
    func testFetchLearnsOnlyWhenAskedOrAllowedAndSaysHowOtherwise() async throws {
        let server = FakeAPI()
        let (plain, _) = makeService(server)
        let request = FetchRequest(method: "GET", url: FakeAPI.resource + "/tools")
        let hinted = try await plain.fetch(request, provider: nil)
        XCTAssertEqual(hinted.status, 401)
        XCTAssertEqual(hinted.login, LoginHint(resource: FakeAPI.resource, authorizationServer: FakeAPI.issuer, scopes: ["mcp"]))
        XCTAssertEqual(server.count("/register"), 0, "a hint learns nothing")
        XCTAssertFalse(plain.covers(url: FakeAPI.resource))
        // learn.allow: fetch learns that origin's APIs unasked, then resends signed.
        var config = AgentConfig()
        config.learnAllow = LearnAllowList(["https://*.example", "https://api.example"])
        let allowed = AuthService(config: config, store: MemorySessionStore(), transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        let answer = try await allowed.fetch(request, provider: nil, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(answer.status, 200)
        XCTAssertEqual(answer.provider, "api.example")
        XCTAssertTrue(answer.signed && answer.retried)
        XCTAssertNil(answer.login)
    }

    func testConcurrentFetchesOfAnUnlearnedAPILearnAndLogInOnce() async throws {
        let server = FakeAPI()
        var config = AgentConfig()
        config.learnAllow = LearnAllowList(["https://api.example"])
        let service = AuthService(config: config, store: MemorySessionStore(), transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        let context = LoginContext(prompt: Self.playBrowser(server))
        async let first = service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, context: context)
        async let second = service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource + "/x"), provider: nil, context: context)
        let (a, b) = try await (first, second)
        XCTAssertEqual([a.status, b.status], [200, 200])
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.count("/token"), 1, "one login for both")
    }

    func testFetchIfNeededLogsInAgainToALearnedAPINobodyIsLoggedInTo() async throws {
        let server = FakeAPI()
        let (service, _) = makeService(server)
        let context = LoginContext(prompt: Self.playBrowser(server))
        _ = try await service.login(resource: FakeAPI.resource, context: context)
        _ = try await service.logout(provider: "api.example", all: true)
        do {
            _ = try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil)
            XCTFail("fetched")
        } catch {
            XCTAssertEqual(error.code, .notLoggedIn)
        }
        let answer = try await service.fetch(FetchRequest(method: "GET", url: FakeAPI.resource), provider: nil, login: .ifNeeded, context: context)
        XCTAssertEqual(answer.status, 200)
        XCTAssertTrue(answer.retried)
        XCTAssertEqual(server.count("/register"), 1, "the registration is reused")
        XCTAssertEqual(server.count("/token"), 2)
    }

    func testTwoResourcesOnOneHostWithDifferentServersStayApart() throws {
        let store = MemorySessionStore()
        var doc = LearnedDocument()
        let a = AuthorizationServer(issuer: "https://as-a.example", tokenEndpoint: "https://as-a.example/token", sendsIss: false, acceptsClientMetadataDocuments: false)
        let b = AuthorizationServer(issuer: "https://as-b.example", tokenEndpoint: "https://as-b.example/token", sendsIss: false, acceptsClientMetadataDocuments: false)
        doc.apis = [LearnedAPI(id: doc.id(for: "https://api.example/a"), resource: "https://api.example/a", server: a, scopes: [])]
        doc.apis.append(LearnedAPI(id: doc.id(for: "https://api.example/b/v1"), resource: "https://api.example/b/v1", server: b, scopes: []))
        doc.clients = [a.issuer: LearnedClient(clientId: "ca", clientSecret: nil, redirectPort: nil, scopes: [], registered: true),
                       b.issuer: LearnedClient(clientId: "cb", clientSecret: nil, redirectPort: nil, scopes: [], registered: true)]
        try store.saveDocument(doc.encoded(), key: StoreKeys.learned)
        let (service, _) = makeService(FakeAPI(), store: store)
        XCTAssertEqual(service.provider(forURL: "https://api.example/a/x", explicit: nil), "api.example")
        XCTAssertEqual(service.provider(forURL: "https://api.example/b/v1/x", explicit: nil), "api.example-b-v1")
        XCTAssertNil(service.provider(forURL: "https://api.example/b/v2", explicit: nil))
        XCTAssertNil(service.provider(forURL: "https://api.example/", explicit: nil))
        // Naming the other resource's provider for a URL is refused (1006), as for configured origins.
        XCTAssertThrowsError(try service.coverage(url: "https://api.example/a/x", provider: "api.example-b-v1"))
    }

    func testAKeptRegistrationTheServerForgotIsReplacedOnceAtTheCodeExchange() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        var kept = LearnedDocument()
        kept.clients[FakeAPI.issuer] = LearnedClient(clientId: "dyn-lost", clientSecret: nil, redirectPort: nil, scopes: ["mcp"], registered: true)
        try store.saveDocument(kept.encoded(), key: StoreKeys.learned)
        server.unknownClients = ["dyn-lost"]
        let (service, _) = makeService(server, store: store)
        let result = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(result.provider, "api.example")
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.count("/token"), 2, "the lost client's exchange, then the new one's")
        XCTAssertEqual(LearnedDocument.decode(try XCTUnwrap(try store.loadDocument(StoreKeys.learned))).clients[FakeAPI.issuer]?.clientId, "dyn-1")
        // A second invalid_client does not register again and again.
        server.unknownClients = ["dyn-2", "dyn-3"]
        _ = try await service.forget(provider: "api.example")
        let (other, _) = makeService(server, store: store)
        do {
            _ = try await other.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
            XCTFail("logged in")
        } catch {
            XCTAssertEqual(error.code, .loginDenied, error.message)
        }
        XCTAssertEqual(server.count("/register"), 3)
    }

    func testAConfigurationMayHaveNoProvidersAndNamesClientsAndLearning() throws {
        XCTAssertEqual(try AgentConfig.parse(Array("{}".utf8), file: "c").providers, [])
        let c = try AgentConfig.parse(Array(#"""
            {"clients": [{"issuer": "https://as.example", "clientId": "pre", "redirectPort": 8765}],
             "clientMetadataUrl": "https://agent.example/client.json", "learn": {"allow": ["https://*.example.com"]}, "openBrowser": true}
            """#.utf8), file: "c")
        XCTAssertEqual(c.clients, [ConfiguredClient(issuer: "https://as.example", clientId: "pre", redirectPort: 8765)])
        XCTAssertEqual(c.clientMetadataUrl, "https://agent.example/client.json")
        XCTAssertTrue(c.learnAllow.allows("https://api.example.com/v1"))
        XCTAssertTrue(c.openBrowser)
    }

    func testAConfiguredClientIsUsedInsteadOfRegistering() async throws {
        let server = FakeAPI()
        var config = AgentConfig()
        config.clients = [ConfiguredClient(issuer: FakeAPI.issuer, clientId: "pre-registered")]
        let service = AuthService(config: config, store: MemorySessionStore(), transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(server.count("/register"), 0)
        XCTAssertEqual(server.authorizeQuery?["client_id"], "pre-registered")
    }
}

extension LearningTests {
    /// Issue 24 item 1: a learned provider makes a DPoP key at login when the server's metadata
    /// lists ES256 in `dpop_signing_alg_values_supported` and `learn.dpop` (or the server's entry
    /// in `clients`, which wins) allows it; the choice is kept in the store, so another process
    /// — whatever its configuration — builds the same provider.
    func testALearnedProviderUsesDPoPWhenTheServerSignsES256AndTheConfigurationAllowsIt() async throws {
        let cases: [(algs: [String]?, config: String, dpop: Bool)] = [
            (["ES256"], #"{"learn": {"dpop": true}}"#, true),
            (["PS256", "ES256"], #"{"learn": {"allow": [], "dpop": true}}"#, true),
            (["RS256"], #"{"learn": {"dpop": true}}"#, false),
            (nil, #"{"learn": {"dpop": true}}"#, false),
            (["ES256"], #"{}"#, false),
            (["ES256"], #"{"learn": {"dpop": false}}"#, false),
            (["ES256"], #"{"clients": [{"issuer": "https://as.example", "clientId": "pre", "dpop": true}]}"#, true),
            (["ES256"], #"{"learn": {"dpop": true}, "clients": [{"issuer": "https://as.example", "clientId": "pre", "dpop": false}]}"#, false),
        ]
        for c in cases {
            let label = "\(c.algs ?? []) \(c.config)"
            let server = FakeAPI()
            server.dpopAlgs = c.algs
            let store = MemorySessionStore()
            let config = try AgentConfig.parse(Array(c.config.utf8), file: "c")
            let service = AuthService(config: config, store: store, transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
            _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
            XCTAssertEqual(service.providerConfig("api.example")?.dpop, c.dpop, label)
            let signed = try await service.sign(url: FakeAPI.resource, provider: nil)
            guard case .signed(let signature) = signed else { return XCTFail("not signed: \(label)") }
            XCTAssertEqual(signature.authorization, c.dpop ? "DPoP at-1" : "Bearer at-1", label)
            XCTAssertEqual(signature.proof != nil, c.dpop, label)
            // Another process with no configuration at all: the stored choice decides.
            let (second, _) = makeService(server, store: store)
            XCTAssertTrue(second.covers(url: FakeAPI.resource), label)
            XCTAssertEqual(second.providerConfig("api.example")?.dpop, c.dpop, label)
            let token = try await second.token(provider: "api.example")
            XCTAssertEqual(token.tokenType, c.dpop ? "DPoP" : "Bearer", label)
        }
    }

    /// Issue 32 item 1 for learned providers: the server's metadata (`require_pushed_authorization_requests`)
    /// or the client's registration requiring PAR makes the browser login push its parameters (`resource`
    /// among them) and open the authorization URL with `client_id` and `request_uri` only.
    func testALearnedProviderPushesWhenItsServerOrRegistrationRequiresIt() async throws {
        for requirement in ["metadata", "registration"] {
            let server = FakeAPI()
            server.requiresPAR = requirement
            let (service, _) = makeService(server)
            _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
            XCTAssertEqual(server.count("/par"), 1, requirement)
            XCTAssertEqual(server.authorizeQuery.map { $0.keys.sorted() }, ["client_id", "request_uri"], requirement)
            XCTAssertEqual(server.lastForm("/par")["resource"], FakeAPI.resource, requirement)
            XCTAssertEqual(server.lastForm("/par")["code_challenge_method"], "S256", requirement)
        }
        // The kept registration's check before the next login does not take the PAR-only server's
        // refusal of a plain request for "unknown client": no second registration.
        let server = FakeAPI()
        server.requiresPAR = "metadata"
        let (service, _) = makeService(server)
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        XCTAssertEqual(server.count("/register"), 1, "\(server.paths())")
        XCTAssertEqual(server.count("/par"), 2)
    }

    /// The benchmark of issue 22: once learned, a request to the resource costs what one to a
    /// configured provider costs — no discovery, one path-prefix check before the origin table.
    /// Prints both per-call costs of `signNow` (the path `sign` and `fetch` take with a valid token).
    func testSigningForALearnedResourceCostsWhatAConfiguredOneCosts() async throws {
        let server = FakeAPI()
        let learnedStore = MemorySessionStore()
        let (learned, _) = makeService(server, store: learnedStore)
        let login = try await learned.login(resource: FakeAPI.resource, context: LoginContext(prompt: Self.playBrowser(server)))
        // The same provider and session, configured by hand (naming the issuer the session came from), in a store of its own.
        var config = AgentConfig()
        var provider = try XCTUnwrap(learned.providerConfig("api.example"))
        provider.learned = nil
        provider.issuer = FakeAPI.issuer
        provider.id = "cfg"
        config.providers = [provider]
        let configuredStore = MemorySessionStore()
        let session = try XCTUnwrap(try learnedStore.load(StoreKeys.account(login.account, of: "api.example")))
        try configuredStore.save(session, for: StoreKeys.account(login.account, of: "cfg"))
        var index = AccountIndex()
        index.add(login.account)
        try configuredStore.saveIndex(index, for: "cfg")
        let configured = AuthService(config: config, store: configuredStore, transport: server, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        server.resetLog()
        func perCall(_ service: AuthService) throws -> Double {
            let url = FakeAPI.resource + "/tools/call"
            let n = 20_000
            let start = DispatchTime.now().uptimeNanoseconds
            for _ in 0..<n {
                guard case .signed? = try service.signNow(url: url, provider: nil) else { XCTFail("not signed"); return 0 }
            }
            return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(n) / 1000
        }
        _ = try perCall(learned)
        _ = try perCall(configured)
        // The best of five each: the machine is shared, and noise only ever adds time.
        var (l, c) = (Double.infinity, Double.infinity)
        for _ in 0..<5 {
            l = min(l, try perCall(learned))
            c = min(c, try perCall(configured))
        }
        print(String(format: "signNow: learned %.2f µs, configured %.2f µs per call", l, c))
        XCTAssertEqual(server.paths(), [], "no request at all once learned")
        XCTAssertLessThan(l, c * 2 + 2, "a learned resource costs about what a configured one does")
    }
}
