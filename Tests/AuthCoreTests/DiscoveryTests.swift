@testable import AuthCore
import Foundation
import JSON
import Logging
import XCTest

/// The one metadata discoverer (`Discovery`): one candidate order, one set of fetching rules and
/// one cache for configured providers, learned providers and `config add`.
final class DiscoveryTests: XCTestCase {
    /// MCP 2025-11-25's order for every issuer: RFC 8414 path-inserted, OpenID path-inserted,
    /// OpenID path-appended (listed once when it is the inserted one, for an issuer without a path).
    func testServerCandidatesAreMCPsOrderForEveryIssuer() {
        let table: [(issuer: String, candidates: [String])] = [
            ("https://id.example.com", ["https://id.example.com/.well-known/oauth-authorization-server",
                                        "https://id.example.com/.well-known/openid-configuration"]),
            ("https://id.example.com/", ["https://id.example.com/.well-known/oauth-authorization-server",
                                         "https://id.example.com/.well-known/openid-configuration"]),
            ("https://id.example.com/tenant/", ["https://id.example.com/.well-known/oauth-authorization-server/tenant",
                                                "https://id.example.com/.well-known/openid-configuration/tenant",
                                                "https://id.example.com/tenant/.well-known/openid-configuration"]),
            ("http://127.0.0.1:8123", ["http://127.0.0.1:8123/.well-known/oauth-authorization-server",
                                       "http://127.0.0.1:8123/.well-known/openid-configuration"]),
            // Entra ID and Keycloak serve only the last form: two 404s at their first discovery.
            ("https://login.microsoftonline.com/tid/v2.0", ["https://login.microsoftonline.com/.well-known/oauth-authorization-server/tid/v2.0",
                                                            "https://login.microsoftonline.com/.well-known/openid-configuration/tid/v2.0",
                                                            "https://login.microsoftonline.com/tid/v2.0/.well-known/openid-configuration"]),
            ("https://kc.example:8443/realms/corp", ["https://kc.example:8443/.well-known/oauth-authorization-server/realms/corp",
                                                     "https://kc.example:8443/.well-known/openid-configuration/realms/corp",
                                                     "https://kc.example:8443/realms/corp/.well-known/openid-configuration"]),
        ]
        for (issuer, candidates) in table {
            XCTAssertEqual(Discovery.serverCandidates(issuer), candidates, issuer)
        }
    }

    /// A configured provider and a learned one of the same authorization server, in one process,
    /// read its metadata once between them, whichever comes first.
    func testConfiguredAndLearnedProvidersReadAnIssuersMetadataOnce() async throws {
        for configuredFirst in [true, false] {
            let server = FakeAPI()
            let service = Self.service(server)
            if configuredFirst { _ = try await service.login(provider: "corp", credentials: nil) }
            _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: LearningTests.playBrowser(server)))
            if !configuredFirst { _ = try await service.login(provider: "corp", credentials: nil) }
            XCTAssertEqual(server.count("/.well-known/oauth-authorization-server"), 1, "configured first: \(configuredFirst); \(server.paths())")
            XCTAssertEqual(server.count("/token"), 2)
        }
    }

    /// A configured provider's discovery keeps the learned rules: a redirect to another origin is
    /// not followed, an HTML page where a form is not served is passed over; failures stay 1005.
    func testConfiguredDiscoveryFollowsTheSameRulesAndKeepsItsCode() async throws {
        let redirecting = ScriptedMetadata(["/.well-known/oauth-authorization-server": HTTPResponse(status: 302, headers: ["Location": "https://evil.example/m"])])
        do {
            _ = try await Discovery(http: HTTPCalls(transport: redirecting, timeout: 5)).metadata(issuer: "https://as.example")
            XCTFail("a redirect to another origin was followed")
        } catch {
            XCTAssertEqual(error.code, .authServerUnavailable)
            XCTAssertTrue(error.message.contains("redirects to another origin (https://evil.example); not followed"), error.message)
        }
        let portal = ScriptedMetadata([
            "/.well-known/oauth-authorization-server/corp": HTTPResponse(status: 200, headers: ["Content-Type": "text/html"], body: Array("<html>".utf8)),
            "/corp/.well-known/openid-configuration": FakeAPI.json(200, ["issuer": "https://as.example/corp", "token_endpoint": "https://as.example/t"]),
        ])
        let metadata = try await Discovery(http: HTTPCalls(transport: portal, timeout: 5)).metadata(issuer: "https://as.example/corp")
        XCTAssertEqual(metadata["token_endpoint"]?.stringValue, "https://as.example/t")
        XCTAssertEqual(portal.asked(), ["/.well-known/oauth-authorization-server/corp", "/.well-known/openid-configuration/corp",
                                        "/corp/.well-known/openid-configuration"])
    }

    private static func service(_ server: FakeAPI) -> AuthService {
        var corp = ProviderConfig(id: "corp", flow: .clientCredentials)
        corp.issuer = FakeAPI.issuer
        corp.clientId = "corp-client"
        corp.clientSecret = "corp-secret"
        return AuthService(config: AgentConfig(providers: [corp]), store: MemorySessionStore(), transport: server,
                           logger: Logger(level: .error, sink: { _ in }), events: { _ in })
    }
}

/// Answers the paths it was given, 404 elsewhere, and remembers what was asked.
private final class ScriptedMetadata: HTTPTransport, @unchecked Sendable {
    private let answers: [String: HTTPResponse]
    private let log = NSLock()
    private var paths: [String] = []

    init(_ answers: [String: HTTPResponse]) { self.answers = answers }

    func asked() -> [String] { log.withLock { paths } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let path = URL(string: request.url)!.path
        log.withLock { paths.append(path) }
        return answers[path] ?? HTTPResponse(status: 404)
    }
}
