#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking
import Wire

/// OAuth 2.0 authorization code grant with PKCE S256 and a loopback redirect
/// (RFC 6749 §4.1, RFC 7636, RFC 8252): the user logs in in a browser; the
/// agent receives the code on `http://127.0.0.1:{port}/callback` and exchanges
/// it together with the verifier that never left this process.
struct AuthorizationCodeProvider: OAuthLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys + ["authorizationEndpoint", "redirectPort", "openBrowser", "par", "pushedAuthorizationRequestEndpoint"], required: ["clientId"],
        discoverable: ["authorizationEndpoint"], fields: [], sharesAccounts: true, waitsForThePerson: true, canRefresh: FlowDescriptor.hasRefreshToken,
        makeProvider: { AuthorizationCodeProvider(config: $0.config, oauth: $0.oauth, clock: $0.clock, revokeTimeout: $0.revokeTimeout, browser: $0.browser) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let clock: Clock
    let revokeTimeout: Double
    let browser: BrowserLauncher
    /// How long the browser has to come back (5 minutes; tests shorten it).
    var callbackTimeout: TimeInterval = 300

    static let callbackPath = "/callback"

    /// The redirect listener. A fixed port (`redirectPort`, or the one a learned client registered) may
    /// still be held for a moment by the previous login's listener, which closes on its own thread: what
    /// nobody announces, so it is polled for up to a second (`Clock.poll`, whose pauses the tests' clock
    /// takes in real time, as the port is freed in real time).
    private func listen(state: String) async throws(AuthError) -> LoopbackRedirectListener {
        let port = UInt16(config.redirectPort ?? 0)
        let open = { try? LoopbackRedirectListener(port: port, path: Self.callbackPath, state: state) }
        let listener = port == 0 ? open() : try? await clock.poll(until: clock.deadline(after: 1), open)
        guard let listener else { throw unavailable("cannot listen for the browser's redirect on 127.0.0.1:\(config.redirectPort ?? 0)") }
        return listener
    }

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        let endpoints = try await oauth.endpoints()
        guard let authorizationEndpoint = endpoints.authorization else {
            throw unavailable("no authorization endpoint is configured or discovered")
        }
        if let problem = Self.profileProblem(config, endpoints) { throw AuthError.loginDenied(config, .refused(problem)) }
        let pkce = PKCE()
        let nonce = Self.wantsNonce(config.scopes) ? SecureRandom.token(bytes: 16) : nil
        // RFC 9449 §10: the key is made now, so the authorization code is bound to it (`dpop_jkt`) and the code grant proves it.
        let dpopKey: DPoPKey?
        do {
            dpopKey = config.dpop ? try DPoPKey.generate() : nil
        } catch {
            throw unavailable(error.description)
        }
        let listener = try await listen(state: pkce.state)
        defer { listener.shutDown() }
        let redirectURI = "http://127.0.0.1:\(listener.port)\(Self.callbackPath)"
        let parameters = Self.authorizationParameters(clientId: config.clientId ?? "", redirectURI: redirectURI, scopes: config.scopes, pkce: pkce,
                                                      nonce: nonce, resource: oauth.automaticResource, dpopJkt: dpopKey?.thumbprint)
            + (oauth.automaticAudience.map { [("audience", $0)] } ?? []) + config.authorizationExtras
        let deadline = clock.deadline(after: callbackTimeout)
        let pushing = try Self.pushEndpoint(config, endpoints)
        let url: BrowserURL
        var lifetime: Double?
        if let pushing {
            let pushed = try await oauth.push(parameters, to: pushing)
            url = try browserURL(pushed.authorizationURL(endpoint: authorizationEndpoint, clientId: config.clientId ?? ""))
            lifetime = Double(pushed.expiresIn)
        } else {
            url = try browserURL(Self.url(authorizationEndpoint, parameters))
        }
        context.acceptPaste(RedirectPaste(listener: listener))
        var open: (@Sendable () -> Void)?
        if context.openBrowser ?? config.openBrowser {
            let browser = self.browser
            open = { browser.open(url) }
        }
        context.present(.browser(url: url.text, expiresAt: deadline.date), LoginTarget(config), open: open)
        // A `request_uri` lives `expires_in` seconds: a login still waiting then pushes again and shows the new URL.
        let repush = pushing.flatMap { endpoint in lifetime.map { repushing(parameters, to: endpoint, every: $0, authorizationEndpoint, listener, context, deadline) } }
        defer { repush?.task.cancel() }

        let callback: LoopbackRedirectListener.Callback
        do {
            callback = try await listener.callback(until: deadline, on: clock)
        } catch .timedOut {
            throw AuthError.loginTimedOut(config, .browserRedirect)
        } catch {
            if let failed = repush?.failure.withLock({ $0 }) { throw failed }
            throw AuthError.loginCancelled(config)
        }
        if let problem = Self.issProblem(callback.query["iss"], expected: Self.expectedIss(config, endpoints)) {
            callback.respond(false, "The sign-in could not be completed: the answer did not come from the expected server.")
            throw AuthError.issuerMismatch(config, problem)
        }
        if let error = callback.query["error"] {
            if parameters.contains(where: { $0.0 == "resource" }), oauth.dropsResource(error, callback.query["error_description"]) {
                callback.respond(false, "The server refused to name this API in the sign-in; it starts again without it.")
                // Its port may be the registered one, which the next listener takes over (`listen` waits for it).
                listener.shutDown()
                return try await login(credentials, context: context)
            }
            callback.respond(false, "The sign-in was not completed (\(error)). You can close this tab.")
            throw AuthError.loginDenied(config, .denied(ServerRefusal(error: error, description: callback.query["error_description"])))
        }
        guard let code = callback.query["code"], !code.isEmpty else {
            callback.respond(false, "The sign-in did not return an authorization code.")
            throw AuthError.loginDenied(config, .noAuthorizationCode)
        }
        let result = await oauth.grant([("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                                        ("code_verifier", pkce.verifier)], proving: dpopKey)
        let token: TokenResponse
        do {
            token = try result.loginTokens(config) { AuthError.loginDenied(config, .codeRefused($0)) }
        } catch {
            callback.respond(false, Self.failurePage(result))
            throw error
        }
        if let problem = Self.nonceProblem(idToken: token.idToken, expected: nonce) {
            callback.respond(false, "The sign-in could not be completed: the server's answer does not belong to this login.")
            throw AuthError.loginDenied(config, .refused(problem))
        }
        callback.respond(true, "You are signed in to \(config.displayName). You can close this tab.")
        return await oauth.finish(token, fallbackUser: [:])
    }

    /// What the browser tab says when the code exchange gave no tokens (`success`
    /// never gets here): the person is told whether trying again can help.
    static func failurePage(_ result: TokenEndpointResult) -> String {
        switch result {
        case .rejected(let error, _): return "The sign-in could not be completed (\(error))."
        case .transient: return "The sign-in could not be completed: the server is unavailable. Please try again."
        case .malformed, .success: return "The sign-in could not be completed: the server's answer was unusable."
        }
    }

    /// The authorization request's parameters (RFC 6749 §4.1.1, RFC 7636, OIDC's `nonce`, RFC 8707's
    /// `resource`, RFC 9449's `dpop_jkt`): in the URL, or pushed (RFC 9126).
    static func authorizationParameters(clientId: String, redirectURI: String, scopes: [String], pkce: PKCE, nonce: String?,
                                        resource: String? = nil, dpopJkt: String? = nil) -> [(String, String)] {
        var pairs: [(String, String)] = [("response_type", "code"), ("client_id", clientId), ("redirect_uri", redirectURI)]
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: " "))) }
        pairs += [("state", pkce.state), ("code_challenge", pkce.challenge), ("code_challenge_method", "S256")]
        if let nonce { pairs.append(("nonce", nonce)) }
        if let resource { pairs.append(("resource", resource)) }
        if let dpopJkt { pairs.append(("dpop_jkt", dpopJkt)) }
        return pairs
    }

    static func url(_ endpoint: String, _ pairs: [(String, String)]) -> String {
        endpoint + (endpoint.contains("?") ? "&" : "?") + String(decoding: FormEncoding.encode(pairs), as: UTF8.self)
    }

    static func authorizationURL(endpoint: String, clientId: String, redirectURI: String, scopes: [String], pkce: PKCE,
                                 nonce: String?, resource: String? = nil) -> String {
        url(endpoint, authorizationParameters(clientId: clientId, redirectURI: redirectURI, scopes: scopes, pkce: pkce, nonce: nonce, resource: resource))
    }

    /// Where this login pushes its request (RFC 9126), or nil to put it in the URL. Pushed when the
    /// provider says `par` (or a profile does), the server requires it, or the registration does;
    /// a push wanted with no endpoint to push to is refused before the browser opens.
    static func pushEndpoint(_ config: ProviderConfig, _ endpoints: Endpoints) throws(AuthError) -> String? {
        guard config.par || endpoints.requiresPAR else { return nil }
        guard let endpoint = endpoints.pushedAuthorization else {
            throw AuthError.loginDenied(config, .refused("pushed authorization requests are required, but no pushed_authorization_request_endpoint is configured or discovered"))
        }
        return endpoint
    }

    /// What a provider's profiles ask of its server's metadata that it does not offer (FAPI 2.0: RFC 9207 `iss`), naming the requirement.
    static func profileProblem(_ config: ProviderConfig, _ endpoints: Endpoints) -> String? {
        guard let profile = config.profiles.first(where: \.requiresIss), !endpoints.sendsIss else { return nil }
        return "\(profile.specification) requires the server to identify itself in authorization responses (RFC 9207), and its metadata has no authorization_response_iss_parameter_supported"
    }

    private func browserURL(_ text: String) throws(AuthError) -> BrowserURL {
        try BrowserURL.checked(text, what: "authorization URL", provider: config)
    }

    /// Pushes the request again each time its `request_uri` expires, and shows the person the new URL, until
    /// the login ends (`task` cancelled); a push that fails ends the login with its error (`failure`).
    private func repushing(_ parameters: [(String, String)], to endpoint: String, every seconds: Double, _ authorizationEndpoint: String,
                           _ listener: LoopbackRedirectListener, _ context: LoginContext, _ deadline: Deadline)
        -> (task: Task<Void, Never>, failure: Locked<AuthError?>) {
        let failure = Locked<AuthError?>(nil)
        let task = Task { [self] in
            var lifetime = seconds
            while !Task.isCancelled {
                guard (try? await clock.sleep(until: clock.deadline(after: lifetime))) != nil, !Task.isCancelled else { return }
                if clock.now() >= deadline.date { return }
                do throws(AuthError) {
                    let pushed = try await oauth.push(parameters, to: endpoint)
                    let url = try browserURL(pushed.authorizationURL(endpoint: authorizationEndpoint, clientId: config.clientId ?? ""))
                    guard !Task.isCancelled else { return }
                    context.present(.browser(url: url.text, expiresAt: deadline.date), LoginTarget(config), open: nil)
                    lifetime = Double(pushed.expiresIn)
                } catch {
                    failure.withLock { $0 = error }
                    listener.shutDown()
                    return
                }
            }
        }
        return (task, failure)
    }

    /// The issuer an authorization response must name (RFC 9207), when the agent knows it — a
    /// learned provider's server, else a configured `issuer` — and whether that server promised
    /// to send `iss` (its metadata's `authorization_response_iss_parameter_supported`).
    /// Nil for a provider configured by endpoints alone: there is no issuer to compare with.
    static func expectedIss(_ config: ProviderConfig, _ endpoints: Endpoints) -> (issuer: String, promised: Bool)? {
        if let learned = config.learned { return (learned.issuer, learned.sendsIss) }
        return config.issuer.map { ($0, endpoints.sendsIss) }
    }

    /// RFC 9207 §2.4, for every provider whose issuer is known: an `iss` on the authorization
    /// response must be that issuer, and one the server promised must be there — else another
    /// server answered (a mix-up) and its code must not reach this provider's token endpoint.
    static func issProblem(_ iss: String?, expected: (issuer: String, promised: Bool)?) -> String? {
        guard let expected else { return nil }
        if let iss { return iss == expected.issuer ? nil : "the authorization response names the issuer \(iss), not \(expected.issuer)" }
        return expected.promised ? "the authorization response carries no iss although \(expected.issuer) says it sends one" : nil
    }

    /// An OpenID Connect login (`openid` scope) sends a fresh `nonce` (OIDC Core
    /// §3.1.2.1): some servers require one, and its echo in the ID token shows
    /// the token was issued for this login, not replayed from another.
    static func wantsNonce(_ scopes: [String]) -> Bool { scopes.contains("openid") }

    /// Why the ID token does not answer the login that sent `expected`, or `nil`
    /// when it does (or no nonce was sent, or no ID token came back). OIDC Core
    /// §3.1.3.7: once a nonce was sent, the ID token must carry the same one.
    static func nonceProblem(idToken: String?, expected: String?) -> String? {
        guard let expected, let idToken else { return nil }
        guard let claims = JWT.claims(of: idToken) else { return "its ID token cannot be read to check the nonce" }
        guard let nonce = claims["nonce"]?.stringValue else { return "its ID token carries no nonce" }
        return nonce == expected ? nil : "its ID token carries another login's nonce"
    }

    private func unavailable(_ why: String) -> AuthError { AuthError.unavailable(config, why) }

}
