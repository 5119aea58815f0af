#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Wire

/// Talks to an OAuth 2.0 authorization server for one provider: token grants
/// (RFC 6749), device authorization (RFC 8628), revocation (RFC 7009) and
/// userinfo (OIDC), with endpoints from configuration or discovery. Separate
/// from the session state, as AppAuth separates its service from `OIDAuthState`.
struct OAuthClient: Sendable {
    let config: ProviderConfig
    let http: HTTPCalls
    let clock: Clock
    let discovery: Discovery
    /// Warns (once per provider) that the server's `expires_in` was unusable.
    let lifetimeWarning: WarnOnce
    /// DPoP nonces by origin, shared by every provider and `fetch` (the agent's one memory of them).
    var nonces = DPoPNonces()
    /// Warns (once per provider) that the server answered a DPoP-proven request with another token type.
    var tokenTypeWarning = WarnOnce { _ in }
    /// What `--log-level debug` is told (a server that refused `resource`).
    var debug: @Sendable (String) -> Void = { _ in }

    /// The provider's endpoints, discovering the missing ones when an issuer is configured.
    func endpoints() async throws(AuthError) -> Endpoints {
        var endpoints = Endpoints(config: config)
        if let issuer = config.issuer, config.discovers {
            do {
                endpoints.fill(from: try await config.metadata(discovery, issuer: issuer))
            } catch {
                throw error.about(config.id)
            }
        }
        return endpoints
    }

    /// Client authentication at `endpoint`: a signed assertion with `clientAuth` (made anew for each
    /// request: its `jti` is used once), else `client_secret_basic` for confidential clients,
    /// `client_id` in the body for public ones. A client key that cannot be used is a failure naming it.
    func clientAuth(_ pairs: [(String, String)], endpoint: String) throws(HTTPCalls.Failure) -> (pairs: [(String, String)], headers: [(String, String)]) {
        let clientId = config.clientId ?? ""
        if config.clientAuth != nil {
            switch ClientAssertion.pairs(config, endpoint: endpoint, now: clock.now()) {
            case .failure(let problem): throw .transient(problem.description)
            case .success(let assertion):
                let id: [(String, String)] = pairs.contains { $0.0 == "client_id" } ? [] : [("client_id", clientId)]
                return (pairs + id + assertion, [])
            }
        }
        if let secret = config.clientSecret {
            return (pairs, [("Authorization", FormEncoding.basicAuthorization(clientId: clientId, clientSecret: secret))])
        }
        // A pushed authorization request carries `client_id` already (it is one of its parameters).
        return (pairs.contains { $0.0 == "client_id" } ? pairs : pairs + [("client_id", clientId)], [])
    }

    /// A grant at the token endpoint; no response at all is `transient`. With
    /// `dpop`, a login grant (no `renewing`) proves a new key, a renewal the
    /// session's (see `DPoP/OAuthClient+DPoP.swift`).
    ///
    /// A server that refuses the learned resource (`invalid_target`, or Entra's AADSTS9010010 whatever
    /// its code) is asked again once without it, and its issuer is remembered (`Discovery`, and the
    /// learned document once the login is kept, for every process), so no later request of any provider sends it there: many servers implement no RFC 8707, and some
    /// (Entra ID since 2026, Keycloak without its feature flag) refuse the parameter outright.
    func grant(_ pairs: [(String, String)], renewing session: Session? = nil, proving key: DPoPKey? = nil) async -> TokenEndpointResult {
        let resource = resourcePairs(besides: pairs)
        let result = await grantOnce(pairs + resource, renewing: session, proving: key)
        guard !resource.isEmpty, case .rejected(let error, let description) = result, dropsResource(error, description) else { return result }
        return await grantOnce(pairs, renewing: session, proving: key)
    }

    /// A refusal of the `resource` parameter rather than of the grant.
    static func refusesResource(_ error: String, _ description: String?) -> Bool {
        error == "invalid_target" || description?.contains("AADSTS9010010") == true
    }

    /// Whether a request that sent the learned resource was refused for it — at the token endpoint,
    /// or before (Glewlwyd refuses it at the authorization and device authorization endpoints too):
    /// then its issuer is remembered, so the caller asks once more without it, as does every later request.
    func dropsResource(_ error: String, _ description: String?) -> Bool {
        guard Self.refusesResource(error, description), let issuer = config.learned?.issuer else { return false }
        if discovery.rememberRefusedResource(issuer) {
            debug("\(config.id): \(issuer) refused the resource parameter (\(ServerRefusal(error: error, description: description).line)); asking again without it, and from now on")
        }
        return true
    }

    private func grantOnce(_ pairs: [(String, String)], renewing session: Session?, proving key: DPoPKey?) async -> TokenEndpointResult {
        let endpoint: String
        do {
            guard let token = try await endpoints().token else { return .transient("no token endpoint is configured or discovered") }
            endpoint = token
        } catch {
            return .transient(error.message)
        }
        if let key { return await postProven(endpoint, pairs, key: key) }
        switch grantKey(renewing: session) {
        case .failure(let why): return .transient(why.description)
        case .success(let key?): return await postProven(endpoint, pairs, key: key)
        case .success(nil): return await post(endpoint, pairs)
        }
    }

    /// A form POST with client authentication, classified like a token response.
    func post(_ endpoint: String, _ pairs: [(String, String)]) async -> TokenEndpointResult {
        do {
            return config.explained(TokenEndpointResult.classify(try await postForm(endpoint, pairs)))
        } catch {
            switch error { case .transient(let why): return .transient(why) }
        }
    }

    /// A form POST to one of this provider's endpoints, with client authentication.
    func postForm(_ endpoint: String, _ pairs: [(String, String)]) async throws(HTTPCalls.Failure) -> HTTPResponse {
        let auth = try clientAuth(pairs, endpoint: endpoint)
        return try await http.postForm(endpoint, auth.pairs, headers: auth.headers)
    }

    /// A session from a token response; a missing refresh token keeps the previous one.
    func session(from token: TokenResponse, previous: Session?, user: JSONValue?) -> Session {
        let now = clock.now()
        if let problem = token.expiresInProblem {
            lifetimeWarning("\(config.id): the token endpoint's answer is odd: \(problem)")
        }
        var expiresAt: Date?
        if let seconds = token.expiresIn {
            expiresAt = now.addingTimeInterval(TimeInterval(seconds))
        } else {
            expiresAt = JWT.expiry(of: token.accessToken)
        }
        return Session(accessToken: token.accessToken, tokenType: token.tokenType,
                       refreshToken: token.refreshToken ?? previous?.refreshToken, expiresAt: expiresAt,
                       idToken: token.idToken ?? previous?.idToken, user: user ?? previous?.user,
                       obtainedAt: now, generation: 0, dpopKey: token.dpopKey ?? previous?.dpopKey)
    }

    /// Who logged in: userinfo when there is an endpoint, with the ID token's display
    /// claims it lacks (decoded for display, not trusted for authorization) when both
    /// name the same `sub` — a server whose userinfo says only `sub` may name the person
    /// in its ID token; else those claims alone, else `fallback`.
    func user(accessToken: String, tokenType: String, idToken: String?, key: DPoPKey?, fallback: JSONValue) async -> JSONValue {
        var claims = JSONObject()
        if let idToken, let token = JWT.claims(of: idToken) {
            for key in ["sub", "name", "email", "preferred_username"] { if let v = token[key] { claims[key] = v } }
        }
        if let endpoint = try? await endpoints().userinfo,
           let response = try? await userinfo(endpoint, accessToken: accessToken, tokenType: tokenType, key: key),
           response.status == 200, let info = try? JSONParser.parse(response.body), case .object(var user) = info
        {
            if claims["sub"] != nil, claims["sub"] == user["sub"] {
                for (key, value) in claims.members where user[key] == nil { user[key] = value }
            }
            return .object(user)
        }
        return claims.isEmpty ? fallback : .object(claims)
    }

    func scopePairs() -> [(String, String)] {
        (config.scopes.isEmpty ? [] : [("scope", config.scopes.joined(separator: " "))]) + resourcePairs(besides: [])
    }

    /// RFC 8707 for a learned provider: every authorization and token request names its
    /// resource (unless the request names one itself), so its tokens are bound to it — as its
    /// server's profile wants a resource asked for: Auth0 by `audience` (`automaticAudience`).
    func resourcePairs(besides pairs: [(String, String)]) -> [(String, String)] {
        guard !pairs.contains(where: { $0.0 == "resource" || $0.0 == "audience" }) else { return [] }
        if let resource = automaticResource { return [("resource", resource)] }
        if let audience = automaticAudience { return [("audience", audience)] }
        return []
    }

    /// The learned provider's resource, unless its server refused `resource` before or its profile
    /// asks for a resource otherwise: Entra refuses `resource` (AADSTS9010010; its scopes name the
    /// API), an Okta authorization server has its one audience, Auth0 takes `audience`.
    var automaticResource: String? {
        guard let learned = config.learned, !discovery.refusesResource(learned.issuer) else { return nil }
        return (config.providerProfile?.resourceParameter ?? .resource) == .resource ? learned.resource : nil
    }

    /// A learned provider's resource as Auth0 wants it asked for: its `audience`.
    var automaticAudience: String? {
        config.providerProfile?.resourceParameter == .audience ? config.learned?.resource : nil
    }

    /// A grant that logs in: its tokens, `invalidCredentials` (for the reason `rejected`)
    /// when the server refuses, `authServerUnavailable` on transient failure,
    /// `loginDenied` naming the problem when the answer is malformed.
    func loginGrant(_ pairs: [(String, String)], rejected: AuthError.CredentialProblem) async throws(AuthError) -> TokenResponse {
        try await grant(pairs).loginTokens(config) { AuthError.invalidCredentials(config, rejected, refusal: $0) }
    }

    /// A grant that renews `session` (a refresh token, or client credentials again).
    func renew(_ session: Session, with pairs: [(String, String)]) async -> RefreshOutcome {
        await grant(pairs, renewing: session).refreshOutcome { self.session(from: $0, previous: session, user: nil) }
    }

    /// The refresh-token grant, asking for `shape` (RFC 6749 §6 allows narrowing
    /// the scope; RFC 8707 adds `resource`); `.none` sends only the refresh token.
    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome {
        guard let refreshToken = session.refreshToken else { return .unsupported }
        if let refusal = config.shapeRefusal(shape) { return .notGranted(refusal) }
        return await renew(session, with: [("grant_type", "refresh_token"), ("refresh_token", refreshToken)] + config.formPairs(shape))
    }

    /// RFC 7009: revoke the refresh token when there is one (servers revoke its
    /// access tokens with it), else the access token.
    func revoke(_ session: Session, timeout: Double) async -> Bool {
        guard let endpoint = try? await endpoints().revocation else { return false }
        let (token, hint) = session.refreshToken.map { ($0, "refresh_token") } ?? (session.accessToken, "access_token")
        guard let auth = try? clientAuth([("token", token), ("token_type_hint", hint)], endpoint: endpoint),
              let response = try? await http.postForm(endpoint, auth.pairs, headers: auth.headers, timeout: timeout) else { return false }
        return response.status == 200
    }

    /// The user for a freshly issued token, then the session.
    func finish(_ token: TokenResponse, fallbackUser: JSONValue) async -> Session {
        let user = await user(accessToken: token.accessToken, tokenType: token.tokenType, idToken: token.idToken, key: token.dpopKey,
                              fallback: fallbackUser)
        return session(from: token, previous: nil, user: user)
    }
}
