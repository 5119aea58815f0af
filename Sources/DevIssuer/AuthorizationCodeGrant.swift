/// The token endpoint's authorization_code grant (RFC 6749 §4.1.3 with the
/// RFC 7636 verifier check): exchanges a single-use code for tokens.
enum AuthorizationCodeGrant {
    static let type = "authorization_code"

    static func handle(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard let code = oauth.parameters["code"] else {
            return OAuthRequest.error(400, "invalid_request", "code is required")
        }
        let outcome = context.state.redeemAuthorizationCode(code, clientID: oauth.client.id, redirectURI: oauth.parameters["redirect_uri"],
                                                            verifier: oauth.parameters["code_verifier"],
                                                            target: target, issuer: context.issuer, now: context.now)
        switch outcome {
        case .issued(let grant): return TokenEndpoint.success(grant)
        case .invalid(let reason): return OAuthRequest.error(400, "invalid_grant", reason)
        case .invalidTarget(let reason): return OAuthRequest.error(400, "invalid_target", reason)
        }
    }
}
