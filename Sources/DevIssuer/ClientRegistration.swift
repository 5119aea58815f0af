import JSON
import Wire

/// A client the issuer did not know at start: registered by RFC 7591 dynamic
/// registration, or identified by the URL of its Client ID Metadata Document.
/// Both are public clients (`token_endpoint_auth_method: none`) with loopback redirect URIs.
struct RegisteredClient: Sendable {
    let clientID: String
    let redirectURIs: [String]
    /// The scope the client registered; `nil` lets it ask for any scope.
    let scope: String?
    /// Everything the registration or document said, echoed by the registration response.
    let metadata: JSONObject
    /// RFC 7592: the bearer token that reads, updates or deletes this registration
    /// (`nil` for clients known by their metadata document).
    var registrationAccessToken: String? = nil

    /// RFC 8252 §7.3: a loopback redirect URI matches a registered one whatever its port
    /// (a registered `http://127.0.0.1/callback` allows `http://127.0.0.1:PORT/callback`).
    func allows(redirectURI: String) -> Bool {
        let asked = Self.withoutPort(redirectURI) ?? redirectURI
        return redirectURIs.contains { (Self.withoutPort($0) ?? $0) == asked }
    }

    /// Why `requested` goes beyond the registered scope (`nil`: it does not).
    func scopeProblem(_ requested: String?) -> String? {
        guard let scope else { return nil }
        let registered = IssuerState.scopes(scope)
        let outside = IssuerState.scopes(requested).filter { !registered.contains($0) }
        return outside.isEmpty ? nil : "scope \(outside.joined(separator: " ")) is not registered for this client; it has \(scope)"
    }

    /// `http://127.0.0.1:PORT/path` → `http://127.0.0.1/path`, for loopback URIs only.
    private static func withoutPort(_ uri: String) -> String? {
        for host in ["http://127.0.0.1:", "http://[::1]:"] where uri.hasPrefix(host) {
            let rest = uri.dropFirst(host.count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { return nil }
            return String(host.dropLast()) + rest.dropFirst(digits.count)
        }
        return nil
    }

    /// Checks RFC 7591 client metadata as a public native client's: loopback redirect URIs
    /// (at least one), `token_endpoint_auth_method` `none`, grant and response types the issuer
    /// serves. Returns the RFC 7591 §3.2.2 error code and description on failure.
    static func validate(_ metadata: JSONObject, clientID: String) -> Result<RegisteredClient, RegistrationError> {
        guard let uris = metadata["redirect_uris"]?.arrayValue, !uris.isEmpty else {
            return .failure(RegistrationError("invalid_redirect_uri", "redirect_uris must be a non-empty array"))
        }
        var redirectURIs: [String] = []
        for uri in uris {
            guard let text = uri.stringValue else { return .failure(RegistrationError("invalid_redirect_uri", "redirect_uris must be strings")) }
            if let problem = LoopbackRedirectURI.problem(text) { return .failure(RegistrationError("invalid_redirect_uri", problem)) }
            redirectURIs.append(text)
        }
        let method = metadata["token_endpoint_auth_method"]
        guard method == nil || method?.stringValue == "none" else {
            return .failure(RegistrationError("invalid_client_metadata", "only public clients (token_endpoint_auth_method none) may register here"))
        }
        let grants = [AuthorizationCodeGrant.type, "refresh_token", DeviceCodeGrant.type]
        if let requested = metadata["grant_types"] {
            guard let list = requested.arrayValue?.compactMap(\.stringValue), list.count == requested.arrayValue?.count,
                  list.allSatisfy(grants.contains) else {
                return .failure(RegistrationError("invalid_client_metadata", "grant_types may hold only " + grants.joined(separator: ", ")))
            }
        }
        if let types = metadata["response_types"], types != ["code"] {
            return .failure(RegistrationError("invalid_client_metadata", "response_types must be [\"code\"]"))
        }
        let scope = metadata["scope"]
        guard scope == nil || scope?.stringValue != nil else {
            return .failure(RegistrationError("invalid_client_metadata", "scope must be a string"))
        }
        return .success(RegisteredClient(clientID: clientID, redirectURIs: redirectURIs, scope: scope?.stringValue, metadata: metadata))
    }
}

/// An RFC 7591 §3.2.2 error.
struct RegistrationError: Error, Sendable {
    let code: String
    let description: String

    init(_ code: String, _ description: String) {
        self.code = code
        self.description = description
    }
}

/// `POST /register`, RFC 7591 dynamic client registration for public native clients:
/// the JSON metadata in, `201` with a fresh `client_id` and the metadata echoed
/// (`client_name`, `software_id`, `software_version`, `scope` and any other member kept).
/// The client can then use `/authorize`, `/token`, `/device_authorization` and `/revoke`.
///
/// RFC 7592 management too, so a client can widen its registered scope in place (a
/// step-up) or delete its registration: the answer carries `registration_client_uri`
/// (`/register/CLIENT_ID`) and `registration_access_token`, good for `GET`, `PUT`
/// (the full new metadata) and `DELETE` there. `DiscoveryFault.noRegistrationManagement`
/// leaves both out, for clients that must then register again.
enum RegistrationEndpoint {
    static let managementPrefix = "/register/"
    /// What every dynamically registered client id starts with.
    static let dynamicPrefix = "dyn-"

    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let faults = context.state.discoveryFaults
        if faults.contains(.noRegistrationEndpoint) { return .error(404, "not_found", "no such endpoint: \(request.path)") }
        if faults.contains(.refuseRegistration) {
            return .error(400, "invalid_client_metadata", "registration is closed on this server", headers: OAuthRequest.noStore)
        }
        guard request.mediaType == "application/json", let body = request.jsonBody?.objectValue else {
            return .error(400, "invalid_client_metadata", "the body must be a JSON object (application/json)", headers: OAuthRequest.noStore)
        }
        let clientID = dynamicPrefix + SecureRandom.token(bytes: 12)
        var client: RegisteredClient
        switch RegisteredClient.validate(body, clientID: clientID) {
        case .failure(let error): return .error(400, error.code, error.description, headers: OAuthRequest.noStore)
        case .success(let valid): client = valid
        }
        if !faults.contains(.noRegistrationManagement) { client.registrationAccessToken = SecureRandom.token(bytes: 24) }
        context.state.register(client)
        var answer = information(client, context)
        if faults.contains(.registrationWithoutClientID) { answer["client_id"] = nil }
        answer["client_id_issued_at"] = .int(Int64(context.now))
        return .json(201, .object(answer), headers: OAuthRequest.noStore)
    }

    /// RFC 7592 §2: `GET`, `PUT` and `DELETE` on `/register/CLIENT_ID` with the registration access token.
    static func manage(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let clientID = String(request.path.dropFirst(managementPrefix.count))
        guard let client = context.state.registeredClient(clientID), let expected = client.registrationAccessToken,
              let presented = request.bearerToken, SecretComparison.equal(expected, presented) else {
            // The same answer for an unknown client and a wrong token (RFC 7592 §2).
            return .error(401, "invalid_token", "unknown client or wrong registration access token",
                          headers: OAuthRequest.noStore + [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
        switch request.method {
        case "GET":
            return .json(200, .object(information(client, context)), headers: OAuthRequest.noStore)
        case "DELETE":
            context.state.unregister(clientID)
            return HTTPResponse(status: 204, headers: OAuthRequest.noStore)
        default:  // PUT: the whole new metadata (RFC 7592 §2.2)
            guard request.mediaType == "application/json", var body = request.jsonBody?.objectValue else {
                return .error(400, "invalid_client_metadata", "the body must be a JSON object (application/json)", headers: OAuthRequest.noStore)
            }
            guard body["client_id"]?.stringValue == clientID else {
                return .error(400, "invalid_request", "client_id must be this registration's", headers: OAuthRequest.noStore)
            }
            for key in ["client_id", "registration_access_token", "registration_client_uri", "client_id_issued_at", "client_secret_expires_at"] {
                body[key] = nil
            }
            switch RegisteredClient.validate(body, clientID: clientID) {
            case .failure(let error):
                return .error(400, error.code, error.description, headers: OAuthRequest.noStore)
            case .success(var updated):
                updated.registrationAccessToken = expected
                context.state.register(updated)
                return .json(200, .object(information(updated, context)), headers: OAuthRequest.noStore)
            }
        }
    }

    /// The client information response (RFC 7591 §3.2.1, RFC 7592 §3): the metadata with defaults filled in.
    private static func information(_ client: RegisteredClient, _ context: RouteContext) -> JSONObject {
        var answer = client.metadata
        answer["client_id"] = .string(client.clientID)
        answer["token_endpoint_auth_method"] = "none"
        if answer["grant_types"] == nil { answer["grant_types"] = [.string(AuthorizationCodeGrant.type)] }
        if answer["response_types"] == nil { answer["response_types"] = ["code"] }
        if let token = client.registrationAccessToken {
            answer["registration_access_token"] = .string(token)
            answer["registration_client_uri"] = .string(context.issuer + managementPrefix + client.clientID)
        }
        return answer
    }
}
