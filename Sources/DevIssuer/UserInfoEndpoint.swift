/// `GET /userinfo` (OIDC Core §5.3): the user behind a bearer access token.
enum UserInfoEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let token = request.bearerToken else {
            return .error(401, "invalid_request", "missing bearer token", headers: [("WWW-Authenticate", "Bearer")])
        }
        switch context.state.subject(ofAccessToken: token, now: context.now) {
        case nil:
            return .error(401, "invalid_token", "the access token is invalid, expired or revoked",
                          headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        case .client?:
            return .error(403, "insufficient_scope", "the token represents a client, not a user",
                          headers: [("WWW-Authenticate", "Bearer error=\"insufficient_scope\"")])
        case .user(let user)?:
            return .json(200, .object(user.standardClaims), headers: [("Cache-Control", "no-store")])
        }
    }
}
