/// `fetch`'s `login` param: `hint` answers an API's 401 with `login` (what to log in to);
/// `ifNeeded` logs in (prompting like `login`) and resends.
public enum FetchLogin: String, Sendable {
    case hint, ifNeeded
}

/// What `fetch` says an API wants: `login {resource}` learns and logs in to it.
public struct LoginHint: Sendable, Equatable {
    public var resource: String
    /// Nil when the metadata that names it was not read (`resourceMetadata`).
    public var authorizationServer: String?
    public var scopes: [String]
    /// The challenge's metadata URL on another origin than the API, which only a login asked
    /// for reads (`fetch` with `login: "ifNeeded"`, `learn.allow`, the `mcp` bridge).
    public var resourceMetadata: String? = nil
}

/// Learning an API from its 401 (RFC 9728 → RFC 8414 → RFC 7591 → login): the learned
/// provider becomes an ordinary `ProviderAccounts`, so accounts, refresh, logout and the
/// keyring work for it unchanged. The store document `StoreKeys.learned` shares it with
/// every other agent process (`checkLearned`, on the store watch).
extension AuthService {
    /// A provider's configuration, learned ones included (the command line names them like configured ones).
    public func providerConfig(_ id: String) -> ProviderConfig? { registry.providers[id]?.config }

    /// Whether a provider (configured or learned) covers `url`: the `mcp` bridge and `fetch`
    /// learn only what nobody covers.
    public func covers(url: String) -> Bool { provider(forURL: url, explicit: nil) != nil }

    /// Learns what protects `url` unless a learned provider covers it already, then logs in
    /// (`flow` nil: the authorization code flow; `.deviceCode` when the server offers it).
    /// `exact`: `url` is the resource itself (`login {resource}`), so the metadata must name it
    /// identically; otherwise (`fetch`, the `mcp` bridge) `url` must lie under the resource.
    /// Failures of discovery and registration are 1014 `discoveryFailed`; nothing is learned from them.
    /// `name`: the id a newly learned API gets (`login {resource, name}`), else one made from its URL.
    public func learn(url: String, challenge: BearerChallenge? = nil, exact: Bool = false, flow: Flow? = nil, name: String? = nil,
                      context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        // Whatever method asked: a forward socket never makes this machine learn an API.
        guard door.reachesTheNetwork else { throw AuthError.notAllowed("login") }
        checkLearned()
        guard try registry.learnedCovering(url) == nil, let origin = Origin(url: url) else {
            return try await learnNow(url: url, challenge: challenge, exact: exact, flow: flow, name: name, context: context)
        }
        // One learning per API at a time in this process: later requests wait for the first one's login.
        let (task, joined) = registry.flights.withLock { flights -> (Task<LoginResult, Error>, Bool) in
            if let running = flights[origin] { return (running, true) }
            let task = Task { [self] () async throws -> LoginResult in
                // Across processes too: a learning that waited finds the API learned and logged in.
                try await oneLogin(Self.learningLockName(origin), provider: nil, context: context, joining: { [self] in learnedSession(url) }) {
                    () async throws(AuthError) in try await learnNow(url: url, challenge: challenge, exact: exact, flow: flow, name: name, context: context)
                }
            }
            flights[origin] = task
            return (task, false)
        }
        do {
            let result = try await task.value
            if !joined { registry.flights.withLock { $0[origin] = nil } }
            // Joined a learning of another resource on the same origin: learn this one now.
            if joined, try registry.learnedCovering(url) == nil {
                return try await learnNow(url: url, challenge: challenge, exact: exact, flow: flow, name: name, context: context)
            }
            return result
        } catch {
            if !joined { registry.flights.withLock { $0[origin] = nil } }
            throw error as? AuthError ?? AuthError.loginCancelled(nil)
        }
    }

    private func learnNow(url: String, challenge: BearerChallenge?, exact: Bool, flow: Flow?, name: String?, context: LoginContext) async throws(AuthError) -> LoginResult {
        if let known = try registry.learnedCovering(url), known.config.learned != nil {
            return try await login(known, flow: flow, credentials: nil, context: context)
        }
        // What `url` teaches the provider to cover: its own path, however broad the resource.
        guard let taught = PathCoverage.coveredURL(url), !PathCoverage.encodesSeparators(url) else {
            throw .discoveryFailed(.resourceMetadata, "\(Origin(url: url)?.description ?? "The URL")'s path encodes a dot, slash or backslash (%2e, %2f or %5c): which path it protects cannot be told.")
        }
        let learning = ResourceDiscovery(documents: discovery, learning: url)
        let resource = try await learning.resource(for: url, challenge: challenge, exact: exact)
        guard Origin(url: resource.resource)?.isSecureForBearer == true, ProviderConfig.resourceProblem(resource.resource) == nil else {
            throw .discoveryFailed(.resourceMetadata, "The resource \(resource.resource) is not an https URL (plain http is allowed on loopback only).")
        }
        if let known = learnedDocument().apis.first(where: { $0.resource == resource.resource && $0.server.issuer == resource.authorizationServers[0] }) {
            return try await widen(known.id, to: taught, flow: flow, context: context)
        }
        do {
            return try await learnNow(resource, taught: taught, learning: learning, challenge: challenge, flow: flow, name: name, context: context)
        } catch {
            // Nothing from a failed attempt is kept, the server's metadata included: the next reads it as it is then.
            discovery.forget(resource.authorizationServers[0])
            throw error
        }
    }

    /// The rest of `learnNow` once `resource` is known and new: the server's metadata, a client, the login.
    private func learnNow(_ resource: ProtectedResource, taught: String, learning: ResourceDiscovery, challenge: BearerChallenge?,
                          flow: Flow?, name: String?, context: LoginContext) async throws(AuthError) -> LoginResult {
        let server = try await learning.server(resource.authorizationServers[0])
        if let enterprise = try await learnByIDJAG(resource, server: server, taught: taught, challenge: challenge, context: context) { return enterprise }
        if let problem = server.loginProblem(flow) { throw problem }
        let (asked, registered) = server.scopes(asking: challenge.map(\.scopes).flatMap { $0.isEmpty ? nil : $0 } ?? resource.scopesSupported,
                                                of: resource)
        let (client, fresh) = try await client(for: server, scopes: registered)
        let loginScopes = client.allowing(asked)
        let learned = learnedDocument()
        if let name, learned.apis.contains(where: { $0.id == name }) {
            throw .discoveryFailed(.login, "Another learned API is already called \"\(name)\".")
        }
        let api = LearnedAPI(id: name ?? learned.id(for: resource.resource), resource: resource.resource, coverage: [taught], server: server, scopes: loginScopes,
                             dpop: server.acceptsES256DPoP && (config.clients.first { $0.issuer == server.issuer }?.dpop ?? config.learnDPoP))
        if let taken = providers(api.id), taken.config.learned == nil {
            throw .discoveryFailed(.login, "A configured provider is already called \"\(api.id)\".")
        }
        logger.info("learned \(resource.resource) (authorization server \(server.issuer)\(api.dpop ? ", DPoP" : "")); logging in as provider \(api.id)")
        return try await logInAndKeep(api, client, fresh: fresh, flow: flow, context: context)
    }

    /// `url`'s 401 named the resource and authorization server of learned provider `id`: the
    /// server's own answer, so the provider covers `taught` too — no new registration, and a
    /// login only when nobody is logged in to it.
    private func widen(_ id: String, to taught: String, flow: Flow?, context: LoginContext) async throws(AuthError) -> LoginResult {
        try await updateLearned { doc in
            if let i = doc.apis.firstIndex(where: { $0.id == id }), !doc.apis[i].coverage.contains(taught) { doc.apis[i].coverage.append(taught) }
        }
        checkLearned()
        guard let p = providers(id), p.config.learned != nil else { throw AuthError.unknownProvider(id, .notKnown) }
        logger.info("\(id) covers \(taught) too: its server named the same resource and authorization server")
        if let c = p.defaultSession, let session = c.current {
            return LoginResult(provider: id, account: c.account, user: session.user ?? [:], expiresAt: session.expiresAt)
        }
        return try await login(p, flow: flow, credentials: nil, context: context)
    }

    /// Step-up (MCP 2025-11-25): logs in to learned provider `id` again for `scopes` (a
    /// registration that does not allow them is replaced by one that does) and keeps them.
    func stepUp(_ id: String, scopes: [String], flow: Flow? = nil, context: LoginContext) async throws(AuthError) -> LoginResult {
        guard var api = learnedDocument().apis.first(where: { $0.id == id }) else {
            throw AuthError.unknownProvider(id, .notLearned)
        }
        api.scopes = scopes
        let (client, fresh) = try await client(for: api.server, scopes: scopes)
        logger.info("stepping up \(id) to the scopes \(scopes.joined(separator: " "))")
        return try await logInAndKeep(api, client, fresh: fresh, flow: flow, context: context)
    }

    /// The login of a learned provider, and only after it succeeded, the provider kept in the
    /// store and in this process: a failed login leaves nothing learned. A kept registration the
    /// server no longer knows is replaced during the login (`withKnownClient`), which then keeps
    /// the provider with the client that logged in.
    func logInAndKeep(_ api: LearnedAPI, _ client: LearnedClient, fresh: Bool, flow: Flow?, context: LoginContext) async throws(AuthError) -> LoginResult {
        var doc = LearnedDocument(apis: [api])
        doc.clients[api.server.issuer] = client
        guard let config = doc.config(api, defaultOpenBrowser: config.openBrowser) else {
            throw .discoveryFailed(.login, "The learned provider for \(api.resource) could not be built.")
        }
        var p = Self.makeAccounts(config, http: http, discovery: discovery, clock: clock, logger: logger, nonces: nonces, subjects: subjects)
        sync.load(p)
        let result = try await login(p, flow: flow, credentials: nil, context: context, server: api.server, fresh: fresh)
        // The registration that logged in: a replacement of a forgotten one is in the store already.
        var client = client
        if client.registered, let now = learnedDocument().clients[api.server.issuer], now.registered, now.clientId != client.clientId {
            (client, p) = (now, provider(p, using: now))
        }
        try await updateLearned { doc in
            var kept = api
            // What another process added to its coverage meanwhile stays.
            if let old = doc.apis.first(where: { $0.id == api.id }), old.resource == api.resource, old.server.issuer == api.server.issuer {
                kept.coverage = old.coverage + api.coverage.filter { !old.coverage.contains($0) }
            }
            doc.apis.removeAll { $0.id == api.id }
            doc.apis.append(kept)
            doc.clients[api.server.issuer] = client
            if discovery.refusesResource(api.server.issuer) { doc.refusingResource.insert(api.server.issuer) }
        }
        // A step-up replaces the provider: the set is the same, nothing to announce.
        if registry.put(p) { announce(added: [api.id]) }
        return result
    }

    /// `fetch`'s `login` member for an uncovered URL's 401: what a `login {resource}` would
    /// learn, from the resource metadata alone (no token is sent anywhere); nil when it cannot tell.
    /// Metadata on another origin than `url` is not read: a plain `fetch` must not make the
    /// agent request what any API names; the hint says where it is.
    func loginHint(for url: String, challenge: BearerChallenge) async -> LoginHint? {
        if let metadata = challenge.resourceMetadata, Origin(url: metadata) != Origin(url: url) {
            return LoginHint(resource: PathCoverage.coveredURL(url) ?? url, authorizationServer: nil, scopes: challenge.scopes, resourceMetadata: metadata)
        }
        guard let resource = try? await ResourceDiscovery(documents: discovery, learning: url).resource(for: url, challenge: challenge, exact: false) else { return nil }
        return LoginHint(resource: resource.resource, authorizationServer: resource.authorizationServers[0],
                         scopes: challenge.scopes.isEmpty ? resource.scopesSupported : challenge.scopes)
    }

    /// `login {resource}`: learn exactly `resource` and log in.
    public func login(resource: String, name: String? = nil, flow: Flow? = nil, context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        guard Origin(url: resource) != nil, ProviderConfig.resourceProblem(resource) == nil else {
            throw .discoveryFailed(.resourceMetadata, "\(resource) is not an absolute http(s) URL.")
        }
        return try await learn(url: resource, exact: true, flow: flow, name: name, context: context)
    }

    /// `forget {provider}`: logs every account of a learned provider out (revoking at the
    /// server), then drops it — and every registration no other learned API uses (the one at a
    /// server its resource moved away from too) — from the store, and the metadata of its server
    /// read in this process.
    /// True when the server confirmed every revocation.
    public func forget(provider id: String) async throws(AuthError) -> Bool {
        guard let p = providers(id) else { throw AuthError.unknownProvider(id, .notKnown) }
        guard let learned = p.config.learned else {
            throw AuthError.unknownProvider(id, .configuredNotLearned)
        }
        let revoked = try await logout(provider: id, all: true)
        try await updateLearned { doc in
            doc.apis.removeAll { $0.id == id }
            for (issuer, client) in doc.clients where client.registered && !doc.apis.contains(where: { $0.server.issuer == issuer }) {
                doc.clients[issuer] = nil
            }
            doc.refusingResource = doc.refusingResource.filter { issuer in doc.apis.contains { $0.server.issuer == issuer } }
        }
        if registry.remove(id) { announce(removed: [id]) }
        // Learning it again decides again (DPoP, the endpoints): from the server's metadata as it is now.
        discovery.forget(learned.issuer)
        logger.info("forgot \(learned.resource) (provider \(id))")
        return revoked
    }

    /// The client to use at `server`: one configured for it › a Client ID Metadata Document
    /// (when configured and accepted) › the registration kept in the store › a new registration,
    /// kept at once under the store lock so every process and later login reuses it. `fresh`: registered now.
    func client(for server: AuthorizationServer, scopes: [String]) async throws(AuthError) -> (LearnedClient, fresh: Bool) {
        if let c = config.clients.first(where: { $0.issuer == server.issuer }) {
            return (LearnedClient(clientId: c.clientId, clientSecret: c.clientSecret, redirectPort: c.redirectPort, scopes: [], registered: false), false)
        }
        if let url = config.clientMetadataUrl, server.acceptsClientMetadataDocuments {
            return (LearnedClient(clientId: url, clientSecret: nil, redirectPort: config.learnRedirectPort, scopes: [], registered: false), false)
        }
        let held = try await lockLearned()
        defer { held.unlock() }
        var doc = learnedDocument()
        if let kept = doc.clients[server.issuer], kept.registered, Set(scopes).isSubset(of: kept.scopes) || scopes.isEmpty { return (kept, false) }
        let fresh = try await ClientRegistration(http: http).register(at: server, scopes: scopes,
                                                                      redirectPort: doc.clients[server.issuer]?.redirectPort ?? config.learnRedirectPort)
        doc.clients[server.issuer] = fresh
        do {
            try sync.store.saveDocument(doc.encoded(), key: StoreKeys.learned)
        } catch {
            throw AuthError.learnedNotKept(.registration(issuer: server.issuer), error)
        }
        logger.info("registered a client at \(server.issuer)")
        return (fresh, true)
    }

    /// The learned document as stored now (empty when none or unreadable).
    func learnedDocument() -> LearnedDocument {
        ((try? sync.store.loadDocument(StoreKeys.learned)) ?? nil).map(LearnedDocument.decode) ?? LearnedDocument()
    }

    func lockLearned() async throws(AuthError) -> StoreLock {
        do {
            return try await sync.store.lock(StoreKeys.learned, timeout: Double(config.lockTimeoutSeconds), clock: clock)
        } catch {
            throw AuthError.learnedNotKept(.lock, error)
        }
    }

    /// Changes the stored document under its lock, re-reading it first so another process's change is kept.
    func updateLearned(_ change: (inout LearnedDocument) -> Void) async throws(AuthError) {
        let held = try await lockLearned()
        defer { held.unlock() }
        var doc = learnedDocument()
        change(&doc)
        do {
            try sync.store.saveDocument(doc.apis.isEmpty && doc.clients.isEmpty ? nil : doc.encoded(), key: StoreKeys.learned)
        } catch {
            throw AuthError.learnedNotKept(.record, error)
        }
    }

    /// Picks up APIs other processes learned or forgot (one `stat` when nothing changed).
    func checkLearned() {
        let stamp = sync.store.documentStamp(StoreKeys.learned)
        let stale = registry.state.withLock { s -> Bool in
            if s.stamp == .some(stamp) { return false }
            s.stamp = .some(stamp)
            return true
        }
        guard stale else { return }
        let doc = learnedDocument()
        for issuer in doc.refusingResource { _ = discovery.rememberRefusedResource(issuer) }
        let ids = Set(doc.apis.map(\.id).filter(door.serves))
        var (added, removed, changed) = ([String](), [String](), [String]())
        for id in registry.learnedIds where !ids.contains(id) {
            if registry.remove(id) { removed.append(id) }
        }
        // A door that does not serve a learned API does not know it (forward sockets name theirs).
        for api in doc.apis where door.serves(api.id) {
            guard let config = doc.config(api, defaultOpenBrowser: config.openBrowser) else { continue }
            let existing = providers(api.id)
            if let existing, existing.config == config || existing.config.learned == nil { continue }
            let p = Self.makeAccounts(config, http: http, discovery: discovery, clock: clock, logger: logger, nonces: nonces, subjects: subjects)
            sync.load(p)
            if registry.put(p) { added.append(api.id) }
            // Its resource moved to another authorization server (`followMove`, here or in another process).
            if let before = existing?.config.learned?.issuer, before != api.server.issuer { changed.append(api.id) }
        }
        announce(added: added, removed: removed, changed: changed)
    }

    /// `providersChanged`, once per change of the set (never per account), outside every lock.
    /// `put` and `remove` say whether they changed the registry, so a provider this process
    /// learns and `checkLearned` also finds in the store is announced once.
    private func announce(added: [String] = [], removed: [String] = [], changed: [String] = []) {
        guard !added.isEmpty || !removed.isEmpty || !changed.isEmpty else { return }
        events(.providersChanged(added: added, removed: removed, changed: changed))
    }

    private func providers(_ id: String) -> ProviderAccounts? { registry.providers[id] }

    /// The interactive-login lock of learning an API of `origin`: named by its origin, since the
    /// provider's id is not known before it is learned.
    static func learningLockName(_ origin: Origin) -> String {
        "learn-" + String(origin.description.map { $0.isLetter || $0.isNumber ? $0 : "-" })
    }

    /// After waiting for another process's learning: the learned provider now covering `url`
    /// with a logged-in account (read from the store), if that learning succeeded.
    private func learnedSession(_ url: String) -> LoginResult? {
        checkLearned()
        guard let p = try? registry.learnedCovering(url) else { return nil }
        sync.catchUp(p)
        guard let c = p.defaultSession, let session = c.current else { return nil }
        return LoginResult(provider: p.id, account: c.account, user: session.user ?? [:], expiresAt: session.expiresAt)
    }
}
