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
enum RegistrationEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let faults = context.state.discoveryFaults
        if faults.contains(.noRegistrationEndpoint) { return .error(404, "not_found", "no such endpoint: \(request.path)") }
        if faults.contains(.refuseRegistration) {
            return .error(400, "invalid_client_metadata", "registration is closed on this server", headers: OAuthRequest.noStore)
        }
        guard request.mediaType == "application/json", let body = request.jsonBody?.objectValue else {
            return .error(400, "invalid_client_metadata", "the body must be a JSON object (application/json)", headers: OAuthRequest.noStore)
        }
        let clientID = "dyn-" + SecureRandom.token(bytes: 12)
        let client: RegisteredClient
        switch RegisteredClient.validate(body, clientID: clientID) {
        case .failure(let error): return .error(400, error.code, error.description, headers: OAuthRequest.noStore)
        case .success(let valid): client = valid
        }
        context.state.register(client)
        var answer = body
        answer["token_endpoint_auth_method"] = "none"
        if answer["grant_types"] == nil { answer["grant_types"] = [.string(AuthorizationCodeGrant.type)] }
        if answer["response_types"] == nil { answer["response_types"] = ["code"] }
        if !faults.contains(.registrationWithoutClientID) { answer["client_id"] = .string(clientID) }
        answer["client_id_issued_at"] = .int(Int64(context.now))
        return .json(201, .object(answer), headers: OAuthRequest.noStore)
    }
}
