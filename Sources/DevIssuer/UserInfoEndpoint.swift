/// `GET /userinfo` (OIDC Core §5.3): the user behind an access token (bearer, or DPoP with its proof).
enum UserInfoEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let token: String
        switch DPoPChecks.accessToken(request, context) {
        case .failure(let refusal): return refusal
        case .success(let presented): token = presented
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
