import JSON
import Wire

/// `POST /token`, the OAuth 2.0 token endpoint (RFC 6749 §3.2) with the
/// password, client_credentials, refresh_token, authorization_code and
/// device_code grants, RFC 8693 token exchange, and the jwt-bearer grant for ID-JAGs
/// of the issuers it trusts.
///
/// Refresh tokens rotate on every use. Presenting a used one after the grace
/// period is treated as theft (OAuth 2.0 Security BCP §4.14.2): the whole token
/// family is revoked, so the legitimate client's newer tokens die too.
///
/// Every grant accepts RFC 8707 `resource` and `audience`, which bind the access
/// token to that target; an unknown one is `invalid_target` before anything else
/// happens, so a refused request never spends a refresh token or a code.
enum TokenEndpoint {
    static let supportedGrants = ["password", "client_credentials", "refresh_token", AuthorizationCodeGrant.type, DeviceCodeGrant.type,
                                  TokenExchangeGrant.type, JWTBearerGrant.type]

    /// The grants this issuer serves (its metadata's `grant_types_supported`): jwt-bearer only when it trusts an issuer's ID-JAGs.
    static func grants(_ state: IssuerState) -> [String] {
        state.trustedIssuers.isEmpty ? supportedGrants.filter { $0 != JWTBearerGrant.type } : supportedGrants
    }

    /// `token` plus `token.<grant_type>` for supported grants, a URN grant type
    /// by its last segment (`token.device_code`).
    static func counterKeys(_ request: HTTPRequest) -> [String] {
        let grant = FormEncoding.decode(request.body)?.first { $0.name == "grant_type" }?.value
        guard let grant, supportedGrants.contains(grant) else { return ["token"] }
        return ["token", "token.\(grant.split(separator: ":").last ?? "")"]
    }

    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let oauth: OAuthRequest
        switch OAuthRequest.parse(request, context) {
        case .rejected(let response): return response
        case .accepted(let parsed): oauth = parsed
        }
        guard let grantType = oauth.parameters["grant_type"] else {
            return OAuthRequest.error(400, "invalid_request", "grant_type is required")
        }
        guard grants(context.state).contains(grantType) else {
            return OAuthRequest.error(400, "unsupported_grant_type", "grant_type \(grantType) is not supported")
        }
        var target = TokenTarget.unbound
        // An ID-JAG's audience and resource are another server's, which that server checks: they go in its claims.
        if !TokenExchangeGrant.asksForIDJAG(oauth.parameters) {
            switch context.state.target(resource: oauth.parameters["resource"], audience: oauth.parameters["audience"], issuer: context.issuer) {
            case .invalid(let description): return OAuthRequest.error(400, "invalid_target", description)
            case .valid(let valid): target = valid
            }
        }
        // RFC 9449: a valid proof binds whatever this grant mints to the proof's key.
        let proven: (bind: String?, proven: String?)
        switch DPoPChecks.tokenRequest(request, context, refreshToken: grantType == "refresh_token" ? oauth.parameters["refresh_token"] : nil) {
        case .failure(let refusal): return refusal
        case .success(let keys): proven = keys
        }
        // A request without a proof (the `dpopBearer` fault answers a proven one with Bearer, which a FAPI client must refuse itself).
        if proven.proven == nil, context.state.clientPolicies.policy(oauth.client.id).fapi2 {
            return OAuthRequest.error(400, "invalid_request", ClientPolicy.fapiBearer)
        }
        return DPoPBinding.$jkt.withValue(proven.bind) { DPoPBinding.$proven.withValue(proven.proven) {
            switch grantType {
            case "password": return password(oauth, target, context)
            case "client_credentials": return clientCredentials(oauth, target, context)
            case "refresh_token": return refreshToken(oauth, target, context)
            case AuthorizationCodeGrant.type: return AuthorizationCodeGrant.handle(oauth, target, context)
            case TokenExchangeGrant.type: return TokenExchangeGrant.handle(oauth, target, context)
            case JWTBearerGrant.type: return JWTBearerGrant.handle(oauth, target, context)
            default: return DeviceCodeGrant.handle(oauth, target, context)
            }
        } }
    }

    private static func password(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard let username = oauth.parameters["username"], let password = oauth.parameters["password"] else {
            return OAuthRequest.error(400, "invalid_request", "username and password are required")
        }
        guard let user = context.state.user(username: username, password: password) else {
            return OAuthRequest.error(400, "invalid_grant", "invalid username or password")
        }
        let grant = context.state.issueTokens(user: user, clientID: oauth.client.id, scope: oauth.parameters["scope"], target: target,
                                              refreshable: true, issuer: context.issuer, now: context.now)
        return success(grant)
    }

    private static func clientCredentials(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard oauth.client.isConfidential else {
            return OAuthRequest.error(400, "unauthorized_client", "public clients may not use client_credentials")
        }
        let scope = oauth.parameters["scope"]
        if let problem = context.state.clientScopeProblem(clientID: oauth.client.id, scope: scope) {
            return OAuthRequest.error(400, "invalid_scope", problem)
        }
        let grant = context.state.issueTokens(user: nil, clientID: oauth.client.id, scope: scope, target: target,
                                              refreshable: false, countingAs: "client_credentials", issuer: context.issuer, now: context.now)
        return success(grant)
    }

    private static func refreshToken(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard let token = oauth.parameters["refresh_token"] else {
            return OAuthRequest.error(400, "invalid_request", "refresh_token is required")
        }
        let outcome = context.state.redeemRefreshToken(token, clientID: oauth.client.id, requestedScope: oauth.parameters["scope"],
                                                       target: target, issuer: context.issuer, now: context.now)
        switch outcome {
        case .issued(let grant), .replayed(let grant):
            return success(grant)
        case .reuseDetected:
            return OAuthRequest.error(400, "invalid_grant", "refresh token was already used; its token family is revoked")
        case .invalid(let reason):
            return OAuthRequest.error(400, "invalid_grant", reason)
        case .invalidScope(let description):
            return OAuthRequest.error(400, "invalid_scope", description)
        }
    }

    static func success(_ grant: TokenGrant) -> HTTPResponse {
        .json(200, grant.json, headers: OAuthRequest.noStore)
    }
}
