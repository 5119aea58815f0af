import JSON

/// `POST /par`, Pushed Authorization Requests (RFC 9126): an authenticated client posts its
/// authorization request's parameters, validated as `/authorize` validates them, and gets a
/// `request_uri` good for `ClientPolicies.parLifetime` seconds (60) that the browser then carries
/// with `client_id` alone. Problems come back as JSON errors (§2.3), never as redirects.
enum PushedAuthorizationEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let oauth: OAuthRequest
        switch OAuthRequest.parse(request, context) {
        case .rejected(let response): return response
        case .accepted(let parsed): oauth = parsed
        }
        guard oauth.parameters["request_uri"] == nil else {
            return OAuthRequest.error(400, "invalid_request", "request_uri must not be pushed (RFC 9126 §2.1)")
        }
        guard oauth.parameters["client_id"] == nil || oauth.parameters["client_id"] == oauth.client.id else {
            return OAuthRequest.error(400, "invalid_request", "client_id is not the authenticated client")
        }
        var parameters = oauth.parameters
        for name in ["client_assertion", "client_assertion_type", "client_secret"] { parameters[name] = nil }
        parameters["client_id"] = oauth.client.id
        switch AuthorizationRequest.validate(parameters, context: context, pushed: true) {
        case .rejected(let reason):
            return OAuthRequest.error(400, "invalid_request", reason)
        case .redirectError(_, let error, let description, _, _):
            return OAuthRequest.error(400, error, description)
        case .valid:
            let pushed = context.state.clientPolicies.push(parameters, clientID: oauth.client.id, now: context.now)
            return .json(201, ["request_uri": .string(pushed.uri), "expires_in": .int(Int64(pushed.expiresIn))], headers: OAuthRequest.noStore)
        }
    }
}
