import JSON
import Wire

/// What a server says of a client registration the agent kept, asked the cheap way it allows.
enum ClientStanding: Sendable, Equatable {
    case known
    /// The server does not know the client; `why` says how it showed it, as a clause.
    case unknown(String)
    /// The answer tells nothing either way (nothing to ask, a 404, a 5xx, no answer): the login goes on as before.
    case unsure

    /// RFC 7592 §2.1: reading a registration the server no longer has is answered 401 (some say 403 or 404).
    static func ofRegistrationRead(status: Int) -> ClientStanding {
        switch status {
        case 200: return .known
        case 401, 403, 404: return .unknown("its registration endpoint answers HTTP \(status) for the client's registration")
        default: return .unsure
        }
    }

    /// RFC 6749 §4.1.2.1: a server answers an authorization request for a client it does not know
    /// with an error page, never a redirect; a known client's request is redirected to the login
    /// (or shown it). Other statuses (404, 5xx) say nothing about the client.
    static func ofAuthorizationRequest(status: Int, body: [UInt8]) -> ClientStanding {
        switch status {
        case 200..<400: return .known
        case 400, 401, 403:
            let refusal = (try? JSONParser.parse(body))?.objectValue.flatMap { o in
                o["error"]?.stringValue.map { ServerRefusal(error: $0, description: o["error_description"]?.stringValue) }
            }
            return .unknown("its authorization endpoint answers the login's request with HTTP \(status)" + (refusal.map { " (\($0.line))" } ?? ", an error page"))
        default: return .unsure
        }
    }
}

/// When a server forgets the client the agent registered (a restart of a server that keeps
/// registrations in memory, a server pruning unused dynamic clients): the one rule, decided here
/// for every door — a new command, a running agent, a running `mcp` bridge. A registration is
/// suspect when the token endpoint answers `invalid_client`, or a refresh is refused and the server
/// (its RFC 7592 registration read, else an authorization request) says it does not know the client.
/// Then it is replaced under the learned document's store lock, once across processes (the first
/// to notice registers, the others adopt that registration), and the login uses the new client.
extension AuthService {
    /// The registration kept in the store that learned provider `config` uses, and the server it was
    /// made at (`server` when the provider is not kept yet); nil for a configured client, a metadata
    /// document, or a registration another process replaced already.
    func keptRegistration(_ config: ProviderConfig, server: AuthorizationServer? = nil) -> (server: AuthorizationServer, client: LearnedClient)? {
        guard let learned = config.learned else { return nil }
        let doc = learnedDocument()
        guard let client = doc.clients[learned.issuer], client.registered, client.clientId == config.clientId,
              let at = server ?? doc.apis.first(where: { $0.server.issuer == learned.issuer })?.server else { return nil }
        return (at, client)
    }

    /// Whether the server still knows `client`: its RFC 7592 registration read when it gave one,
    /// else the authorization request a login would open (a throwaway state and challenge, the
    /// registered redirect URI), sent without following its redirect.
    func standing(_ config: ProviderConfig, _ client: LearnedClient) async -> ClientStanding {
        if let uri = client.registrationURI, let token = client.registrationToken,
           let read = try? await http.send("GET", uri, headers: [("Authorization", "Bearer \(token)"), ("Accept", "application/json")], body: nil) {
            let verdict = ClientStanding.ofRegistrationRead(status: read.status)
            if verdict != .unsure { return verdict }
        }
        // A server that takes pushed requests only (RFC 9126) refuses a plain one whoever the client
        // is: its refusal says nothing of the client, and the push itself is the check.
        guard !config.par, let endpoint = config.authorizationEndpoint, let port = client.redirectPort else { return .unsure }
        let nonce = AuthorizationCodeProvider.wantsNonce(config.scopes) ? SecureRandom.token(bytes: 16) : nil
        let url = AuthorizationCodeProvider.authorizationURL(endpoint: endpoint, clientId: client.clientId,
                                                             redirectURI: "http://127.0.0.1:\(port)\(AuthorizationCodeProvider.callbackPath)",
                                                             scopes: config.scopes, pkce: PKCE(), nonce: nonce, resource: config.learned?.resource)
        guard let answer = try? await http.send("GET", url, headers: [("Accept", "text/html, application/json")], body: nil) else { return .unsure }
        return ClientStanding.ofAuthorizationRequest(status: answer.status, body: answer.body)
    }

    /// The rule's action: `forgotten`, registered at `server`, is unknown there (`why`). Under the
    /// learned document's lock, once across processes: a registration another process kept
    /// meanwhile is adopted, else a new one is made (same redirect port and scopes) and kept. This
    /// process's providers are rebuilt with it at once (`checkLearned`); others see it on their store watch.
    func registerAgain(at server: AuthorizationServer, forgotten: LearnedClient, why: String) async throws(AuthError) -> LearnedClient {
        let (client, adopted) = try await replaceRegistration(at: server, forgotten: forgotten, why: why)
        if adopted {
            logger.info("\(server.issuer) no longer knows the client it registered for auth-agent; using the one another auth-agent process registered")
        } else {
            logger.info("registered a new client at \(server.issuer); the next login uses it")
        }
        checkLearned()
        return client
    }

    private func replaceRegistration(at server: AuthorizationServer, forgotten: LearnedClient, why: String) async throws(AuthError) -> (LearnedClient, Bool) {
        let held = try await lockLearned()
        defer { held.unlock() }
        var doc = learnedDocument()
        if let kept = doc.clients[server.issuer], kept.registered, kept.clientId != forgotten.clientId { return (kept, true) }
        logger.warn("\(server.issuer) no longer knows the client auth-agent registered there (\(why)); registering a new one")
        let fresh = try await ClientRegistration(http: http).register(at: server, scopes: forgotten.scopes, redirectPort: forgotten.redirectPort)
        doc.clients[server.issuer] = fresh
        do {
            try sync.store.saveDocument(doc.encoded(), key: StoreKeys.learned)
        } catch {
            throw AuthError.learnedNotKept(.registration(issuer: server.issuer), error)
        }
        return (fresh, false)
    }

    /// After the token endpoint refused a refresh of `config`'s session: `invalid_client` says the
    /// server forgot the registration; another refusal asks the server (`standing`). A forgotten
    /// one is replaced now, so the login that follows — in this process — uses a client that works.
    /// Never throws: the session ends either way, and a failure here is retried at the next login.
    func refreshRefused(_ config: ProviderConfig, _ refusal: ServerRefusal) async {
        checkLearned()
        guard let kept = keptRegistration(config) else { return }
        let verdict = refusal.error == "invalid_client" ? .unknown("its token endpoint answered \(refusal.line)") : await standing(config, kept.client)
        guard case .unknown(let why) = verdict else { return }
        do {
            _ = try await registerAgain(at: kept.server, forgotten: kept.client, why: why)
        } catch {
            logger.warn("registering again at \(kept.server.issuer) failed: \(error.message) The next login tries again.")
        }
    }

    /// An interactive login of `p` by `flow`, with a client the server knows. For a learned
    /// provider's kept registration the authorization request is checked first (skipped for one
    /// registered for this very login, `fresh`): one the server does not know is replaced before
    /// anyone is sent to a login that cannot work, and one still refused after that is an error,
    /// not a browser. `invalid_client` at the token or device endpoint replaces it once too.
    func withKnownClient(_ p: ProviderAccounts, _ flow: Flow, server: AuthorizationServer? = nil, fresh: Bool = false,
                         _ login: (ProviderAccounts) async throws(AuthError) -> LoginResult) async throws(AuthError) -> LoginResult {
        guard p.config.learned != nil else { return try await login(p) }
        var p = p
        var replaced = false
        if !fresh, flow == .authorizationCode, let kept = keptRegistration(p.config, server: server),
           case .unknown(let why) = await standing(p.config, kept.client) {
            let client = try await registerAgain(at: kept.server, forgotten: kept.client, why: why)
            if case .unknown(let still) = await standing(p.config, client) {
                throw AuthError.loginDenied(p.config, .authorizationRequestRefused(still))
            }
            (p, replaced) = (provider(p, using: client), true)
        }
        do {
            return try await login(p)
        } catch where !replaced && error.code == .loginDenied && error.serverError == "invalid_client" {
            guard let kept = keptRegistration(p.config, server: server) else { throw error }
            let client = try await registerAgain(at: kept.server, forgotten: kept.client, why: "its token endpoint answered invalid_client")
            return try await login(provider(p, using: client))
        }
    }

    /// `p` with `client` instead of its own: the provider this process holds under that id now
    /// (`checkLearned` rebuilt it), else one built for this login (a provider not kept yet).
    func provider(_ p: ProviderAccounts, using client: LearnedClient) -> ProviderAccounts {
        if let now = registry.providers[p.id], now.config.learned != nil, now.config.clientId == client.clientId { return now }
        var config = p.config
        (config.clientId, config.clientSecret, config.redirectPort) = (client.clientId, client.clientSecret, client.redirectPort)
        let rebuilt = Self.makeAccounts(config, http: http, discovery: discovery, clock: clock, logger: logger, nonces: nonces, subjects: subjects)
        sync.load(rebuilt)
        return rebuilt
    }
}
