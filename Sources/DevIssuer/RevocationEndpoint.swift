/// `POST /revoke`, RFC 7009 token revocation.
///
/// Answers 200 for unknown tokens too (RFC 7009 §2.2): the client's goal, a
/// token that no longer works, is met either way.
enum RevocationEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let oauth: OAuthRequest
        switch OAuthRequest.parse(request, context) {
        case .rejected(let response): return response
        case .accepted(let parsed): oauth = parsed
        }
        guard let token = oauth.parameters["token"] else {
            return OAuthRequest.error(400, "invalid_request", "token is required")
        }
        switch context.state.revoke(token, clientID: oauth.client.id) {
        case .revoked, .unknown:
            return .json(200, [:], headers: OAuthRequest.noStore)
        case .wrongClient:
            return OAuthRequest.error(400, "unauthorized_client", "the token was issued to another client")
        }
    }
}
