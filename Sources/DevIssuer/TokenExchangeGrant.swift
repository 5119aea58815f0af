import JSON

/// RFC 8693 token exchange at the token endpoint: an access, ID or refresh token of this issuer's for an access
/// token — or, with `requested_token_type` id-jag, an ID token for an Identity Assertion JWT Authorization Grant
/// (`IDJAG`) that the authorization server named in `audience` accepts. An `actor_token` (an access token) is named
/// in the issued token's `act` claim (§4.1). Subject and actor tokens that are not valid, and token types not
/// served, are `invalid_request` (§2.2.2); an ID-JAG without an `audience` too.
enum TokenExchangeGrant {
    static let type = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let accessToken = "urn:ietf:params:oauth:token-type:access_token"
    static let idToken = "urn:ietf:params:oauth:token-type:id_token"
    static let refreshToken = "urn:ietf:params:oauth:token-type:refresh_token"

    static func asksForIDJAG(_ parameters: [String: String]) -> Bool {
        parameters["grant_type"] == type && parameters["requested_token_type"] == IDJAG.tokenType
    }

    static func handle(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        let p = oauth.parameters
        guard let subjectToken = p["subject_token"], let subjectType = p["subject_token_type"] else {
            return OAuthRequest.error(400, "invalid_request", "subject_token and subject_token_type are required")
        }
        let user: UserProfile?
        switch subjectType {
        case accessToken:
            if case .user(let person)? = context.state.describe(accessToken: subjectToken, now: context.now)?.subject { user = person } else { user = nil }
        case idToken: user = context.state.user(ofIDToken: subjectToken, now: context.now)
        case refreshToken: user = context.state.user(ofRefreshToken: subjectToken, clientID: oauth.client.id)
        default: return OAuthRequest.error(400, "invalid_request", "subject_token_type is not one this issuer exchanges")
        }
        guard let user else { return OAuthRequest.error(400, "invalid_request", "the subject_token is not a valid token of that type") }
        var act: JSONValue?
        if let actor = p["actor_token"] {
            guard p["actor_token_type"] == accessToken, let subject = context.state.describe(accessToken: actor, now: context.now)?.subject else {
                return OAuthRequest.error(400, "invalid_request", "the actor_token is not a valid access token")
            }
            switch subject {
            case .user(let person): act = ["sub": .string(person.username)]
            case .client(let id): act = ["sub": .string(id)]
            }
        }
        switch p["requested_token_type"] ?? accessToken {
        case accessToken:
            let grant = context.state.issueExchangedToken(user: user, clientID: oauth.client.id, scope: p["scope"], target: target, act: act,
                                                          countingAs: "token_exchange", issuer: context.issuer, now: context.now)
            return issued(grant.json, type: accessToken)
        case IDJAG.tokenType:
            guard subjectType == idToken else { return OAuthRequest.error(400, "invalid_request", "an ID-JAG is issued for an ID token only") }
            guard let audience = p["audience"] else {
                return OAuthRequest.error(400, "invalid_request", "audience (the authorization server's issuer) is required for an ID-JAG")
            }
            guard let key = try? context.state.signing.current(),
                  let jag = try? IDJAG.mint(user: user, audience: audience, clientID: oauth.client.id, resource: p["resource"], scope: p["scope"],
                                            issuer: context.issuer, now: context.now, key: key)
            else { return OAuthRequest.error(500, "server_error", "libcrypto is not available to sign the ID-JAG") }
            context.state.countIDJAG(user: user.username)
            var body: JSONObject = ["access_token": .string(jag), "token_type": "N_A", "expires_in": .int(IDJAG.lifetime)]
            if let scope = p["scope"] { body["scope"] = .string(scope) }
            return issued(.object(body), type: IDJAG.tokenType)
        default:
            return OAuthRequest.error(400, "invalid_request", "requested_token_type is not one this issuer issues")
        }
    }

    /// The §2.2.1 answer: the token response with `issued_token_type`.
    private static func issued(_ body: JSONValue, type: String) -> HTTPResponse {
        guard case .object(var object) = body else { return .json(200, body, headers: OAuthRequest.noStore) }
        object["issued_token_type"] = .string(type)
        return .json(200, .object(object), headers: OAuthRequest.noStore)
    }
}
