import DevIssuer
import Foundation
import JSON
import XCTest

/// What a client needs to learn an API by itself from the dev issuer: the protected
/// resource `ISSUER/mcp` and its RFC 9728 metadata, RFC 8414 metadata naming
/// registration, RFC 7591 registration, Client ID Metadata Documents, RFC 9207 `iss`,
/// RFC 8707 audience checks, `insufficient_scope`, and a fault for each refusal.
final class LearningTests: IssuerTestCase {
    private var base: String { "http://127.0.0.1:\(port)" }
    private let redirect = "http://127.0.0.1:49152/callback"

    // MARK: Discovery

    func testTheResourcesChallengeNamesItsMetadataAndScope() throws {
        let answer = try get("/mcp")
        XCTAssertEqual(answer.status, 401)
        XCTAssertEqual(answer.header("WWW-Authenticate"),
                       "Bearer scope=\"mcp\", resource_metadata=\"\(base)/.well-known/oauth-protected-resource/mcp\"")
        XCTAssertEqual(issuer.learnableResource, base + "/mcp")
        XCTAssertEqual(issuer.learnableResourceMetadata, base + "/.well-known/oauth-protected-resource/mcp")
    }

    func testResourceMetadataAtThePathInsertedAndRootForms() throws {
        for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
            let metadata = try get(path)
            XCTAssertEqual(metadata.status, 200, path)
            XCTAssertEqual(metadata.json?["resource"]?.stringValue, base + "/mcp", path)
            XCTAssertEqual(metadata.json?["authorization_servers"], [.string(base)], path)
            XCTAssertEqual(metadata.json?["scopes_supported"], ["mcp"], path)
        }
        XCTAssertEqual(issuer.count("resourceMetadata"), 2)
    }

    func testServerMetadataNamesRegistrationDocumentsAndIss() throws {
        for path in ["/.well-known/oauth-authorization-server", "/.well-known/openid-configuration"] {
            let metadata = try XCTUnwrap(try get(path).json)
            XCTAssertEqual(metadata["issuer"]?.stringValue, base)
            XCTAssertEqual(metadata["registration_endpoint"]?.stringValue, base + "/register")
            XCTAssertEqual(metadata["client_id_metadata_document_supported"], true)
            XCTAssertEqual(metadata["authorization_response_iss_parameter_supported"], true)
            XCTAssertTrue(metadata["scopes_supported"]?.arrayValue?.contains("mcp") == true)
        }
    }

    // MARK: Registration and the login

    func testRegisteredClientLogsInForTheResourceAndTheResourceAcceptsItsToken() throws {
        let clientID = try register(["scope": "mcp"])
        issuer.setAutoApprove(username: "alice")
        let query = try authorize(clientID, scope: "mcp", resource: base + "/mcp")
        XCTAssertEqual(query["state"], "s1")
        XCTAssertEqual(query["iss"], base, "RFC 9207")
        let code = try XCTUnwrap(query["code"])
        let tokens = try exchange(code, clientID: clientID)
        XCTAssertEqual(tokens.status, 200, tokens.text)
        let access = try XCTUnwrap(tokens.json?["access_token"]?.stringValue)
        let refresh = try XCTUnwrap(tokens.json?["refresh_token"]?.stringValue)

        let who = try get("/mcp", bearer: access)
        XCTAssertEqual(who.status, 200, who.text)
        XCTAssertEqual(who.json?["resource"]?.stringValue, base + "/mcp", "bound to the authorization request's resource")
        XCTAssertEqual(who.json?["client_id"]?.stringValue, clientID)

        let admin = try get("/mcp/admin", bearer: access)
        XCTAssertEqual(admin.status, 403)
        XCTAssertEqual(admin.header("WWW-Authenticate"),
                       "Bearer error=\"insufficient_scope\", scope=\"mcp admin\", resource_metadata=\"\(base)/.well-known/oauth-protected-resource/mcp\"")

        let refreshed = try token([("grant_type", "refresh_token"), ("client_id", clientID), ("refresh_token", refresh),
                                   ("resource", base + "/mcp")])
        XCTAssertEqual(refreshed.status, 200, refreshed.text)
        XCTAssertEqual(issuer.registeredClientIDs, [clientID])
    }

    func testTheMCPEndpointAnswersJSONRPC() throws {
        let access = try mcpToken(scope: "mcp")
        let initialize = try postJSON("/mcp", ["jsonrpc": "2.0", "id": 1, "method": "initialize",
                                               "params": ["protocolVersion": "2025-06-18", "capabilities": [:]]], bearer: access)
        XCTAssertEqual(initialize.status, 200, initialize.text)
        XCTAssertEqual(initialize.json?["result"]?["protocolVersion"], "2025-06-18")
        XCTAssertNotNil(initialize.header("Mcp-Session-Id"))
        XCTAssertEqual(try postJSON("/mcp", ["jsonrpc": "2.0", "method": "notifications/initialized"], bearer: access).status, 202)
        let call = try postJSON("/mcp", ["jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": "whoami"]], bearer: access)
        XCTAssertEqual(call.json?["result"]?["content"], [["type": "text", "text": "alice"]])
        XCTAssertEqual(try postJSON("/mcp", ["jsonrpc": "2.0", "id": 3, "method": "tools/list"]).status, 401)
    }

    func testStepUpWithTheAdminScope() throws {
        let access = try mcpToken(scope: "mcp admin")
        let admin = try get("/mcp/admin", bearer: access)
        XCTAssertEqual(admin.status, 200, admin.text)
        XCTAssertEqual(admin.json?["scope"]?.stringValue, "mcp admin")
    }

    func testTheResourceRefusesTokensForAnotherResourceOrWithoutItsScope() throws {
        let other = try token([("grant_type", "password"), ("client_id", "cli"), ("username", "alice"), ("password", "wonderland"),
                               ("scope", "mcp"), ("resource", "https://api.example.com")])
        let refused = try get("/mcp", bearer: try XCTUnwrap(other.json?["access_token"]?.stringValue))
        XCTAssertEqual(refused.status, 401)
        XCTAssertTrue(refused.header("WWW-Authenticate")?.hasPrefix("Bearer error=\"invalid_token\"") == true, "\(refused.headers)")
        let unscoped = try get("/mcp", bearer: try mcpToken(scope: "openid"))
        XCTAssertEqual(unscoped.status, 403)
    }

    func testTheCodeIsBoundToTheAuthorizedResource() throws {
        let clientID = try register([:])
        issuer.setAutoApprove(username: "alice")
        let code = try XCTUnwrap(try authorize(clientID, scope: "mcp", resource: base + "/mcp")["code"])
        let wrong = try exchange(code, clientID: clientID, resource: base + "/api")
        XCTAssertEqual(wrong.status, 400)
        XCTAssertEqual(wrong.json?["error"], "invalid_target")
        XCTAssertEqual(try exchange(code, clientID: clientID, resource: base + "/mcp").status, 200, "a refused exchange spends nothing")
        let unknown = try authorize(clientID, scope: "mcp", resource: "https://unknown.example.com")
        XCTAssertEqual(unknown["error"], "invalid_target")
        XCTAssertEqual(unknown["iss"], base)
    }

    func testRegistrationKeepsTheMetadataAndRefusesWhatItCannotServe() throws {
        let answer = try postJSON("/register", [
            "redirect_uris": [.string(redirect)], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token", "urn:ietf:params:oauth:grant-type:device_code"],
            "client_name": "auth-agent", "software_id": "auth-agent", "software_version": "1.2.3", "scope": "mcp",
        ])
        XCTAssertEqual(answer.status, 201, answer.text)
        let registered = try XCTUnwrap(answer.json)
        let clientID = try XCTUnwrap(registered["client_id"]?.stringValue)
        for key in ["client_name", "software_id", "software_version", "scope"] {
            XCTAssertEqual(registered[key], issuer.registration(of: clientID)?[key], key)
        }
        XCTAssertEqual(registered["client_name"], "auth-agent")
        XCTAssertNotNil(registered["client_id_issued_at"]?.intValue)
        XCTAssertEqual(answer.header("Cache-Control"), "no-store")

        let device = try postForm("/device_authorization", [("client_id", clientID), ("scope", "mcp")])
        XCTAssertEqual(device.status, 200, "a registered client is a client everywhere: \(device.text)")

        let refusals: [(JSONValue, String)] = [
            (["redirect_uris": ["https://example.com/callback"]], "invalid_redirect_uri"),
            (["redirect_uris": []], "invalid_redirect_uri"),
            (["redirect_uris": [.string(redirect)], "token_endpoint_auth_method": "client_secret_basic"], "invalid_client_metadata"),
            (["redirect_uris": [.string(redirect)], "grant_types": ["password"]], "invalid_client_metadata"),
            ("not an object", "invalid_client_metadata"),
        ]
        for (body, error) in refusals {
            let refused = try postJSON("/register", body)
            XCTAssertEqual(refused.status, 400, "\(body)")
            XCTAssertEqual(refused.json?["error"]?.stringValue, error, "\(body)")
        }
        XCTAssertEqual(issuer.count("register"), 1 + refusals.count)
    }

    func testARegisteredClientsRedirectURIsAndScopeAreEnforced() throws {
        let clientID = try register(["scope": "mcp"])
        issuer.setAutoApprove(username: "alice")
        let otherPort = try get("/authorize?" + query(clientID, scope: "mcp", redirect: "http://127.0.0.1:50000/callback"))
        XCTAssertEqual(otherPort.status, 302, "RFC 8252 §7.3: any port on loopback")
        let otherPath = try get("/authorize?" + query(clientID, scope: "mcp", redirect: "http://127.0.0.1:49152/elsewhere"))
        XCTAssertEqual(otherPath.status, 400, "never redirected to an unregistered URI")
        let wider = try authorize(clientID, scope: "mcp admin", resource: nil)
        XCTAssertEqual(wider["error"], "invalid_scope")
        XCTAssertEqual(wider["error_description"], "scope admin is not registered for this client; it has mcp")
    }

    /// RFC 7592: a step-up widens the registered scope in place; `DELETE` ends the registration.
    func testRegistrationManagementWidensTheScopeAndDeletes() throws {
        let registered = try XCTUnwrap(try postJSON("/register", ["redirect_uris": [.string(redirect)], "scope": "mcp"]).json)
        let clientID = try XCTUnwrap(registered["client_id"]?.stringValue)
        let uri = try XCTUnwrap(registered["registration_client_uri"]?.stringValue)
        let token = try XCTUnwrap(registered["registration_access_token"]?.stringValue)
        XCTAssertEqual(uri, base + "/register/" + clientID)
        let path = String(uri.dropFirst(base.count))

        let read = try get(path, bearer: token)
        XCTAssertEqual(read.status, 200, read.text)
        XCTAssertEqual(read.json?["scope"], "mcp")
        XCTAssertEqual(try get(path, bearer: "wrong").status, 401)
        XCTAssertEqual(try get("/register/dyn-unknown", bearer: token).status, 401, "no hint that the client exists")

        issuer.setAutoApprove(username: "alice")
        XCTAssertEqual(try authorize(clientID, scope: "mcp admin", resource: nil)["error"], "invalid_scope")
        var update = try XCTUnwrap(read.json?.objectValue)
        update["scope"] = "mcp admin"
        let put = try send("PUT", path, headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")],
                           body: JSONSerializer.bytes(.object(update)))
        XCTAssertEqual(put.status, 200, put.text)
        XCTAssertEqual(put.json?["scope"], "mcp admin")
        XCTAssertEqual(put.json?["registration_access_token"]?.stringValue, token)
        XCTAssertNotNil(try authorize(clientID, scope: "mcp admin", resource: nil)["code"], "the wider scope is registered now")

        update["client_id"] = "someone-else"
        XCTAssertEqual(try send("PUT", path, headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")],
                                body: JSONSerializer.bytes(.object(update))).status, 400)
        let deleted = try send("DELETE", path, headers: [("Authorization", "Bearer \(token)")])
        XCTAssertEqual(deleted.status, 204)
        XCTAssertEqual(try get("/authorize?" + query(clientID, scope: "mcp", redirect: redirect)).status, 400, "unknown client now")
        XCTAssertEqual(try get(path, bearer: token).status, 401)
        XCTAssertEqual(issuer.count("registrationManagement"), 7)

        issuer.injectDiscoveryFault(.noRegistrationManagement)
        let unmanaged = try XCTUnwrap(try postJSON("/register", ["redirect_uris": [.string(redirect)]]).json)
        XCTAssertNil(unmanaged["registration_client_uri"])
        XCTAssertNil(unmanaged["registration_access_token"])
    }

    // MARK: Client ID Metadata Documents

    func testAClientIdentifiedByItsMetadataDocument() throws {
        let url = issuer.publishClientMetadataDocument(name: "agent", clientName: "auth-agent")
        XCTAssertEqual(url, base + "/clients/agent")
        let document = try get("/clients/agent")
        XCTAssertEqual(document.json?["client_id"]?.stringValue, url)
        issuer.setAutoApprove(username: "bob")
        let query = try authorize(url, scope: "mcp", resource: base + "/mcp")
        let tokens = try exchange(try XCTUnwrap(query["code"], "\(query)"), clientID: url)
        XCTAssertEqual(tokens.status, 200, tokens.text)
        let who = try get("/mcp", bearer: try XCTUnwrap(tokens.json?["access_token"]?.stringValue))
        XCTAssertEqual(who.json?["sub"], "bob")
        XCTAssertEqual(who.json?["client_id"]?.stringValue, url)
        XCTAssertEqual(issuer.count("clientMetadata"), 2, "the test's GET and the issuer's own fetch")
    }

    func testBadMetadataDocumentsAreRefusedWithoutARedirect() throws {
        let mismatched = issuer.publishClientMetadataDocument(name: "liar", document: [
            "client_id": "http://127.0.0.1:1/clients/someone-else", "redirect_uris": ["http://127.0.0.1/callback"],
        ])
        let secretive = issuer.publishClientMetadataDocument(name: "secret", document: [
            "client_id": .string(base + "/clients/secret"), "redirect_uris": ["http://127.0.0.1/callback"], "client_secret": "s",
        ])
        for url in [mismatched, secretive, base + "/clients/missing", "https://client.example.com/metadata.json"] {
            let answer = try get("/authorize?" + query(url, scope: "mcp", redirect: redirect))
            XCTAssertEqual(answer.status, 400, url)
            XCTAssertTrue(answer.text.contains("Client metadata document refused"), answer.text)
        }
    }

    // MARK: Faults

    func testEachDiscoveryFault() throws {
        issuer.injectDiscoveryFault(.noChallengeMetadata)
        XCTAssertEqual(try get("/mcp").header("WWW-Authenticate"), "Bearer scope=\"mcp\"")
        issuer.injectDiscoveryFault(.noPathMetadata)
        XCTAssertEqual(try get("/.well-known/oauth-protected-resource/mcp").status, 404)
        XCTAssertEqual(try get("/.well-known/oauth-protected-resource").status, 200)
        issuer.injectDiscoveryFault(.wrongResource)
        XCTAssertEqual(try get("/.well-known/oauth-protected-resource").json?["resource"]?.stringValue, base + "/elsewhere")
        issuer.injectDiscoveryFault(.oversizedResourceMetadata)
        XCTAssertGreaterThan(try get("/.well-known/oauth-protected-resource").body.count, 256 * 1024)

        issuer.injectDiscoveryFault(.wrongIssuer)
        issuer.injectDiscoveryFault(.insecureEndpoint)
        issuer.injectDiscoveryFault(.noClientMetadataDocuments)
        let metadata = try get("/.well-known/oauth-authorization-server")
        XCTAssertEqual(metadata.json?["issuer"]?.stringValue, base + "/other-issuer")
        XCTAssertEqual(metadata.json?["token_endpoint"]?.stringValue, "http://auth.example.com/token")
        XCTAssertNil(metadata.json?["client_id_metadata_document_supported"])
        issuer.injectDiscoveryFault(.oversizedServerMetadata)
        XCTAssertGreaterThan(try get("/.well-known/oauth-authorization-server").body.count, 256 * 1024)

        issuer.injectDiscoveryFault(.registrationWithoutClientID)
        let anonymous = try postJSON("/register", ["redirect_uris": [.string(redirect)]])
        XCTAssertEqual(anonymous.status, 201)
        XCTAssertNil(anonymous.json?["client_id"])
        issuer.injectDiscoveryFault(.refuseRegistration)
        let refused = try postJSON("/register", ["redirect_uris": [.string(redirect)]])
        XCTAssertEqual(refused.status, 400)
        XCTAssertEqual(refused.json?["error"], "invalid_client_metadata")
        issuer.injectDiscoveryFault(.noRegistrationEndpoint)
        XCTAssertNil(try get("/.well-known/oauth-authorization-server").json?["registration_endpoint"])
        XCTAssertEqual(try postJSON("/register", ["redirect_uris": [.string(redirect)]]).status, 404)

        issuer.clearDiscoveryFaults()
        XCTAssertEqual(try get("/.well-known/oauth-authorization-server").json?["issuer"]?.stringValue, base)
        XCTAssertEqual(try postJSON("/register", ["redirect_uris": [.string(redirect)]]).status, 201)
    }

    func testAnIssuerWithAPathIsFoundByThePathForms() throws {
        let tenantForms = ["/.well-known/oauth-authorization-server/tenant", "/.well-known/openid-configuration/tenant",
                           "/tenant/.well-known/openid-configuration"]
        for path in tenantForms { XCTAssertEqual(try get(path).status, 404, "\(path) only with the variant on") }
        issuer.injectDiscoveryFault(.issuerWithPath)
        XCTAssertEqual(try get("/.well-known/oauth-protected-resource/mcp").json?["authorization_servers"], [.string(base + "/tenant")])
        for path in tenantForms {
            let metadata = try get(path)
            XCTAssertEqual(metadata.json?["issuer"]?.stringValue, base + "/tenant", path)
            XCTAssertEqual(metadata.json?["registration_endpoint"]?.stringValue, base + "/register", path)
        }
        XCTAssertEqual(try get("/.well-known/oauth-authorization-server").json?["issuer"]?.stringValue, base, "the root issuer stays")
        issuer.setAutoApprove(username: "alice")
        XCTAssertEqual(try authorize("cli", scope: "mcp", resource: nil)["iss"], base + "/tenant")

        issuer.injectDiscoveryFault(.onlyPathAppendedMetadata)
        XCTAssertEqual(try get(tenantForms[0]).status, 404)
        XCTAssertEqual(try get(tenantForms[1]).status, 404)
        XCTAssertEqual(try get(tenantForms[2]).status, 200)
        issuer.injectDiscoveryFault(.wrongIssuer)
        XCTAssertEqual(try get(tenantForms[2]).json?["issuer"]?.stringValue, base + "/tenant/other-issuer")
    }

    func testIssFaults() throws {
        issuer.setAutoApprove(username: "alice")
        issuer.injectDiscoveryFault(.wrongIss)
        XCTAssertEqual(try authorize("cli", scope: "mcp", resource: nil)["iss"], "https://attacker.example")
        issuer.clearDiscoveryFaults()
        issuer.injectDiscoveryFault(.missingIss)
        let query = try authorize("cli", scope: "mcp", resource: nil)
        XCTAssertNotNil(query["code"])
        XCTAssertNil(query["iss"])
    }

    func testDiscoveryFaultsAndDocumentsOverHTTP() throws {
        XCTAssertEqual(try postJSON("/_admin/fault", ["discovery": ["wrong-issuer", "wrong-resource"]]).status, 200)
        XCTAssertEqual(try get("/.well-known/oauth-authorization-server").json?["issuer"]?.stringValue, base + "/other-issuer")
        XCTAssertEqual(try postJSON("/_admin/fault", ["discovery": .null]).status, 200)
        XCTAssertEqual(try get("/.well-known/oauth-authorization-server").json?["issuer"]?.stringValue, base)
        XCTAssertEqual(try postJSON("/_admin/fault", ["discovery": "no-such-fault"]).status, 400)
        _ = try postJSON("/_admin/fault", ["discovery": "wrong-iss"])
        XCTAssertEqual(try postJSON("/_admin/reset", [:]).status, 200)
        XCTAssertEqual(issuer.counts["discovery"], nil, "admin requests are not counted")

        let published = try postJSON("/_admin/client-metadata", ["name": "other", "document": ["client_id": "x"]])
        XCTAssertEqual(published.json?["url"]?.stringValue, base + "/clients/other")
        XCTAssertEqual(try get("/clients/other").json?["client_id"], "x")
        XCTAssertEqual(try postJSON("/_admin/client-metadata", ["name": "a/b", "document": [:]]).status, 400)
    }

    // MARK: Helpers

    private func register(_ extra: JSONObject) throws -> String {
        var body: JSONObject = ["redirect_uris": [.string(redirect)], "token_endpoint_auth_method": "none",
                                "grant_types": ["authorization_code", "refresh_token"], "client_name": "tests"]
        for (key, value) in extra.members { body[key] = value }
        let answer = try postJSON("/register", .object(body))
        XCTAssertEqual(answer.status, 201, answer.text)
        return try XCTUnwrap(answer.json?["client_id"]?.stringValue)
    }

    private func query(_ clientID: String, scope: String?, resource: String? = nil, redirect: String) -> String {
        var parameters = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirect), ("state", "s1"),
                          ("code_challenge", AuthorizationCodeTests.challenge), ("code_challenge_method", "S256")]
        if let scope { parameters.append(("scope", scope)) }
        if let resource { parameters.append(("resource", resource)) }
        return parameters.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
    }

    /// `GET /authorize` (auto-approve must be on) and the redirect's query.
    private func authorize(_ clientID: String, scope: String?, resource: String?,
                           file: StaticString = #filePath, line: UInt = #line) throws -> [String: String] {
        let answer = try get("/authorize?" + query(clientID, scope: scope, resource: resource, redirect: redirect))
        XCTAssertEqual(answer.status, 302, answer.text, file: file, line: line)
        let location = try XCTUnwrap(answer.header("Location"), file: file, line: line)
        let items = URLComponents(string: location)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    private func exchange(_ code: String, clientID: String, resource: String? = nil) throws -> TestResponse {
        var fields = [("grant_type", "authorization_code"), ("client_id", clientID), ("code", code), ("redirect_uri", redirect),
                      ("code_verifier", AuthorizationCodeTests.verifier)]
        if let resource { fields.append(("resource", resource)) }
        return try token(fields)
    }

    /// An access token for `/mcp` with `scope`, by the `cli` client's code flow.
    private func mcpToken(scope: String) throws -> String {
        issuer.setAutoApprove(username: "alice")
        let code = try XCTUnwrap(try authorize("cli", scope: scope, resource: base + "/mcp")["code"])
        let tokens = try exchange(code, clientID: "cli")
        return try XCTUnwrap(tokens.json?["access_token"]?.stringValue, tokens.text)
    }
}
