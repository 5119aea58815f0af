/// A validated authorization request (RFC 6749 §4.1.1 with RFC 7636 PKCE), read
/// from the query of `GET /authorize` or the hidden fields of its form.
///
/// Validation follows RFC 6749 §4.1.2.1: while the client or the redirect URI
/// is in doubt the error is shown to the person and nothing redirects (else the
/// issuer would be an open redirector); once both are good, every other problem
/// goes back to the client as `?error=…&state=…&iss=…`.
///
/// Clients are the configured ones, registered ones (RFC 7591: their redirect URIs
/// and scope are enforced) and, for a `client_id` that is a URL, the client its
/// metadata document describes (fetched here, at each authorization request).
/// Every response redirected to the client carries the RFC 9207 `iss`.
struct AuthorizationRequest: Sendable {
    let clientID: String
    let redirectURI: String
    let state: String?
    let scope: String?
    let codeChallenge: String?
    let nonce: String?
    /// RFC 8707: the resource the tokens will be for.
    let resource: String?
    /// RFC 9207: the issuer identifier on the authorization response (`nil`: omitted, a fault).
    let iss: String?
    /// RFC 9449 §10: the thumbprint the code is bound to; the code grant must prove that key.
    let dpopJkt: String?
    /// RFC 9126: the `request_uri` the request was pushed under (the form posts it back).
    var requestURI: String?

    enum Validation {
        case valid(AuthorizationRequest)
        /// Unknown client or unacceptable redirect URI: answer with a 400 page.
        case rejected(String)
        /// Anything else: redirect to the (validated) URI with this error.
        case redirectError(redirectURI: String, error: String, description: String, state: String?, iss: String?)
    }

    /// The names this request is made of, in the order the form repeats them.
    static let parameterNames = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method",
                                 "nonce", "resource", "dpop_jkt"]

    /// Refuses an `openid` request without `nonce` when the issuer requires one, as some OpenID providers do.
    /// A `request_uri` (RFC 9126) stands for the parameters pushed under it, which are validated again;
    /// a client whose policy requires pushing (or FAPI 2.0) is refused anything else.
    static func validate(_ query: [String: String], context: RouteContext, pushed: Bool = false) -> Validation {
        var parameters = query
        var requestURI: String?
        if !pushed, let uri = query["request_uri"] {
            guard let stored = context.state.clientPolicies.pushed(uri, now: context.now), stored.clientID == query["client_id"] else {
                return .rejected("request_uri is unknown, expired, or was pushed by another client.")
            }
            parameters = stored.parameters
            requestURI = uri
        }
        guard let clientID = parameters["client_id"] else { return .rejected("Unknown or missing client_id.") }
        var registered = context.state.registeredClient(clientID)
        if context.state.configuredClients[clientID] == nil, ClientMetadataDocuments.isDocumentURL(clientID) {
            switch context.state.resolveClientMetadataDocument(clientID) {
            case .failure(let error): return .rejected("Client metadata document refused: \(error.description).")
            case .success(let client): registered = client
            }
        }
        guard let secret = context.state.clients[clientID] else { return .rejected("Unknown or missing client_id.") }
        guard let redirectURI = parameters["redirect_uri"] else { return .rejected("redirect_uri is required.") }
        if let problem = LoopbackRedirectURI.problem(redirectURI) { return .rejected(problem + ".") }
        if let registered, !registered.allows(redirectURI: redirectURI) {
            return .rejected("redirect_uri is not one this client registered.")
        }

        let state = parameters["state"]
        let iss = context.state.authorizationResponseIss(issuer: context.issuer)
        func fail(_ error: String, _ description: String) -> Validation {
            .redirectError(redirectURI: redirectURI, error: error, description: description, state: state, iss: iss)
        }
        let policy = context.state.clientPolicies.policy(clientID)
        if policy.pushedOnly, requestURI == nil, !pushed {
            return fail("invalid_request", policy.fapi2 ? "FAPI 2.0 requires pushed authorization requests: " + ClientPolicy.pushRequired : ClientPolicy.pushRequired)
        }
        switch parameters["response_type"] {
        case nil: return fail("invalid_request", "response_type is required")
        case "code": break
        case let other?:
            return fail("unsupported_response_type", policy.fapi2 ? "FAPI 2.0 allows only response_type code, not \(other)" : "response_type \(other) is not supported; use code")
        }
        let challenge = parameters["code_challenge"]
        let method = parameters["code_challenge_method"]
        switch (challenge, method) {
        case (nil, nil):
            if secret == nil { return fail("invalid_request", "public clients must use PKCE (code_challenge with S256)") }
        case (nil, .some):
            return fail("invalid_request", "code_challenge_method without code_challenge")
        case (.some, let method):
            guard method == "S256" else { return fail("invalid_request", "code_challenge_method must be S256") }
            guard PKCE.isWellFormedChallenge(challenge!) else { return fail("invalid_request", "code_challenge is not a base64url SHA-256") }
        }
        let nonce = parameters["nonce"]
        if context.state.requireNonce, nonce == nil, IssuerState.scopes(parameters["scope"]).contains("openid") {
            return fail("invalid_request", "nonce required")
        }
        if let problem = registered?.scopeProblem(parameters["scope"]) { return fail("invalid_scope", problem) }
        let resource = parameters["resource"]
        if let resource, case .invalid(let description) = context.state.target(resource: resource, audience: nil, issuer: context.issuer) {
            return fail("invalid_target", description)
        }
        if policy.fapi2, challenge == nil { return fail("invalid_request", "FAPI 2.0 requires PKCE with S256") }
        return .valid(AuthorizationRequest(clientID: clientID, redirectURI: redirectURI, state: state, scope: parameters["scope"],
                                           codeChallenge: challenge, nonce: nonce, resource: resource, iss: iss,
                                           dpopJkt: parameters["dpop_jkt"], requestURI: requestURI))
    }

    /// The parameters again, for the form's hidden fields.
    var formFields: [(name: String, value: String)] {
        if let requestURI { return [("client_id", clientID), ("request_uri", requestURI)] }
        var fields: [(name: String, value: String)] = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI)]
        if let scope { fields.append(("scope", scope)) }
        if let state { fields.append(("state", state)) }
        if let codeChallenge {
            fields.append(("code_challenge", codeChallenge))
            fields.append(("code_challenge_method", "S256"))
        }
        if let nonce { fields.append(("nonce", nonce)) }
        if let resource { fields.append(("resource", resource)) }
        if let dpopJkt { fields.append(("dpop_jkt", dpopJkt)) }
        return fields
    }

    /// The redirect carrying a code (RFC 6749 §4.1.2, RFC 9207 `iss`).
    func redirect(code: String) -> HTTPResponse {
        var parameters = [(name: "code", value: code)]
        if let state { parameters.append((name: "state", value: state)) }
        if let iss { parameters.append((name: "iss", value: iss)) }
        return .redirect(LoopbackRedirectURI.appending(parameters, to: redirectURI))
    }

    /// This request's redirect carrying an error.
    func redirect(error: String, description: String) -> HTTPResponse {
        Self.redirect(error: error, description: description, state: state, iss: iss, to: redirectURI)
    }

    /// The redirect carrying an error (RFC 6749 §4.1.2.1, RFC 9207 `iss`).
    static func redirect(error: String, description: String, state: String?, iss: String?, to redirectURI: String) -> HTTPResponse {
        var parameters = [(name: "error", value: error), (name: "error_description", value: description)]
        if let state { parameters.append((name: "state", value: state)) }
        if let iss { parameters.append((name: "iss", value: iss)) }
        return .redirect(LoopbackRedirectURI.appending(parameters, to: redirectURI))
    }
}
