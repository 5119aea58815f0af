import JSON

/// RFC 7523 §2.1's jwt-bearer grant with an ID-JAG as the assertion, as an API's authorization server accepts it
/// (draft-ietf-oauth-identity-assertion-authz-grant §5): only from the issuers `DevIssuerOptions.trustedIssuers`
/// names, checked by `IDJAG.verify`; an access token for the user it names, bound to its `resource`, no refresh token.
enum JWTBearerGrant {
    static let type = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    static func handle(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard let assertion = oauth.parameters["assertion"] else { return OAuthRequest.error(400, "invalid_request", "assertion is required") }
        let state = context.state
        let checked = IDJAG.verify(assertion, issuer: context.issuer, clientID: oauth.client.id, trusted: state.trustedIssuers, now: context.now,
                                   keys: IDJAG.fetchKeys)
        let grant: IDJAG.Grant
        switch checked {
        case .failure(let refusal): return OAuthRequest.error(400, "invalid_grant", refusal.description)
        case .success(let ok): grant = ok
        }
        guard let user = state.users[grant.subject] else { return OAuthRequest.error(400, "invalid_grant", "the assertion's subject is not a user here") }
        // The ID-JAG's resource binds the token; a request naming another is refused.
        if let asked = target.resource, let granted = grant.resource, asked != granted {
            return OAuthRequest.error(400, "invalid_target", "the resource is not the one the assertion grants")
        }
        var bound = target
        if bound.resource == nil, let resource = grant.resource {
            guard case .valid(let parsed) = state.target(resource: resource, audience: target.audience, issuer: context.issuer) else {
                return OAuthRequest.error(400, "invalid_target", "the assertion's resource is not served here")
            }
            bound = parsed
        }
        let issued = state.issueExchangedToken(user: user, clientID: oauth.client.id, scope: oauth.parameters["scope"] ?? grant.scope, target: bound,
                                               act: nil, countingAs: "jwt_bearer", issuer: context.issuer, now: context.now)
        return TokenEndpoint.success(issued)
    }
}
