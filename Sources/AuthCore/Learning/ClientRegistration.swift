import JSON
import Wire

/// RFC 7591 dynamic registration as a public native client (RFC 8252): no secret, PKCE,
/// a loopback redirect on a port chosen once and registered, the grants the agent uses.
public struct ClientRegistration: Sendable {
    let http: HTTPCalls
    static let softwareId = "auth-agent"
    static let softwareVersion = "0.1.0"

    /// Registers at `server` asking for `scopes` (the resource's; FastMCP gives a client registered
    /// without `scope` a default and drops the rest at `/authorize`); keeps `redirectPort` when given.
    func register(at server: AuthorizationServer, scopes: [String], redirectPort: Int?) async throws(AuthError) -> LearnedClient {
        guard let endpoint = server.registrationEndpoint else {
            throw .discoveryFailed(.registration, "\(server.issuer) offers no dynamic registration and no client is configured for it; add one to the configuration's \"clients\" ({\"issuer\": \"\(server.issuer)\", \"clientId\": …}).")
        }
        guard Origin(url: endpoint)?.isSecureForBearer == true else {
            throw .discoveryFailed(.registration, "The registration endpoint of \(server.issuer) is not https.")
        }
        let port: Int
        if let redirectPort { port = redirectPort } else { port = try Self.freePort() }
        let redirectURI = "http://127.0.0.1:\(port)\(AuthorizationCodeProvider.callbackPath)"
        var body = Self.metadata(redirectURI: redirectURI, deviceCode: server.deviceAuthorizationEndpoint != nil)
        // Glewlwyd 2.7.5 looks for "none" in an array, not RFC 7591's string, so it registers the agent as a
        // confidential client and refuses its code grant (`unauthorized_client`) unless told by its own
        // field; other servers ignore metadata they do not know (RFC 7591 §2).
        body["client_confidential"] = false
        var (response, answer) = try await post(body, scopes: scopes, to: endpoint, of: server)
        // Glewlwyd 2.7.5 lists RFC 8628's grant type in its metadata yet refuses it in a registration
        // (it wants its own `device_authorization`): asked once more without it, a browser login still works.
        if server.deviceAuthorizationEndpoint != nil, Self.refusedForGrantTypes(response, answer) {
            body["grant_types"] = Self.metadata(redirectURI: redirectURI, deviceCode: false)["grant_types"]
            (response, answer) = try await post(body, scopes: scopes, to: endpoint, of: server)
        }
        // A server may refuse a `scope` listing values it does not list itself (certified ones do):
        // once with only the scopes it lists, then without `scope`, which it fills with its default.
        var sent = scopes
        for fallback in Self.scopeFallbacks(asked: scopes, listed: server.scopesSupported)
        where Self.refusedMetadata(response, answer) && !Self.refusedForGrantTypes(response, answer) {
            (response, answer) = try await post(body, scopes: fallback, to: endpoint, of: server)
            sent = fallback
        }
        guard response.status == 200 || response.status == 201 else {
            let refusal = answer?["error"]?.stringValue.map { ServerRefusal(error: $0, description: answer?["error_description"]?.stringValue) }
            throw .registrationRefused(issuer: server.issuer, status: response.status, refusal)
        }
        guard let clientId = answer?["client_id"]?.stringValue, !clientId.isEmpty else {
            throw .discoveryFailed(.registration, "The registration answer of \(server.issuer) has no client_id.")
        }
        let granted = answer?["scope"]?.stringValue.map { $0.split(separator: " ").map(String.init) } ?? sent
        var client = LearnedClient(clientId: clientId, clientSecret: answer?["client_secret"]?.stringValue, redirectPort: port,
                                   scopes: granted, registered: true, requiresPAR: answer?["require_pushed_authorization_requests"]?.boolValue == true)
        // RFC 7592 management, kept only on the registration endpoint's own origin (the token goes nowhere else).
        if let uri = answer?["registration_client_uri"]?.stringValue, let token = answer?["registration_access_token"]?.stringValue,
           !token.isEmpty, Origin(url: uri) == Origin(url: endpoint) {
            (client.registrationURI, client.registrationToken) = (uri, token)
        }
        return client
    }

    /// The client the agent is, as RFC 7591 metadata: a public native client (RFC 8252) with a
    /// loopback redirect, the grants it uses. What a registration sends (with the port it listens on)
    /// and what `auth-agent client-metadata` publishes (without one: any port, as RFC 8252 has it).
    static func metadata(redirectURI: String, deviceCode: Bool) -> JSONObject {
        var grants: [JSONValue] = ["authorization_code", "refresh_token"]
        if deviceCode { grants.append("urn:ietf:params:oauth:grant-type:device_code") }
        return [
            "client_name": "auth-agent", "software_id": .string(softwareId), "software_version": .string(softwareVersion),
            "redirect_uris": .array([.string(redirectURI)]),
            "token_endpoint_auth_method": "none", "grant_types": .array(grants), "response_types": ["code"],
            // OpenID Connect Registration §2: a native client's loopback redirect may take any port
            // at servers that follow RFC 8252 (MCP 2026-07-28 requires saying it).
            "application_type": "native",
        ]
    }

    /// A Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document) for the agent,
    /// to publish at `url` — its `client_id` — and name in the configuration's `clientMetadataUrl`.
    public static func metadataDocument(at url: String) -> JSONObject {
        var document: JSONObject = ["client_id": .string(url)]
        for (key, value) in metadata(redirectURI: "http://127.0.0.1\(AuthorizationCodeProvider.callbackPath)", deviceCode: true).members {
            document[key] = value
        }
        return document
    }

    /// One registration request, `scope` set to `scopes` (left out when empty).
    private func post(_ body: JSONObject, scopes: [String], to endpoint: String, of server: AuthorizationServer) async throws(AuthError) -> (HTTPResponse, JSONObject?) {
        var body = body
        if !scopes.isEmpty { body["scope"] = .string(scopes.joined(separator: " ")) }
        do {
            let response = try await http.postJSON(endpoint, .object(body))
            return (response, (try? JSONParser.parse(response.body))?.objectValue)
        } catch {
            switch error { case .transient(let why): throw .discoveryFailed(.registration, "Cannot register at \(server.issuer): \(why).") }
        }
    }

    /// What to ask for after a registration refused for its scope: the asked scopes the server's
    /// metadata lists (when that differs and leaves some), then none. Nothing when none was asked.
    static func scopeFallbacks(asked: [String], listed: [String]) -> [[String]] {
        guard !asked.isEmpty else { return [] }
        let kept = asked.filter(listed.contains)
        return (!kept.isEmpty && kept != asked ? [kept] : []) + [[]]
    }

    /// RFC 7591 §3.2.2's `invalid_client_metadata`, which a refused `scope` is answered with (and any other field).
    static func refusedMetadata(_ response: HTTPResponse, _ answer: JSONObject?) -> Bool {
        response.status == 400 && answer?["error"]?.stringValue == "invalid_client_metadata"
    }

    /// An `invalid_client_metadata` whose description names `grant_types`: the server's words are the
    /// only sign of which field it refused (RFC 7591 §3.2.2 has one error code for all of them).
    static func refusedForGrantTypes(_ response: HTTPResponse, _ answer: JSONObject?) -> Bool {
        refusedMetadata(response, answer) && answer?["error_description"]?.stringValue?.contains("grant_types") == true
    }

    /// A loopback port free now, to register once and listen on at every login.
    static func freePort() throws(AuthError) -> Int {
        do throws(SocketError) {
            // Closed here and now (a redirect listener closes on its own thread, later).
            let bound = try LoopbackSocket.makeListener(port: 0, backlog: 1)
            LoopbackSocket.closeDescriptor(bound.fd)
            return Int(bound.port)
        } catch {
            throw .discoveryFailed(.registration, "Cannot find a free loopback port for the login's redirect.")
        }
    }
}
