/// A learned API's sessions and registration belong to the authorization server that issued
/// them (MCP 2026-07-28: credentials keyed by the issuer, never reused with another server). A
/// resource may later name another server — a tenant migrated, an MCP server put behind a new
/// IdP — and its old tokens stop working there. The agent notices where the refresh rule meets a
/// rejected token: the one moment the old server's tokens failed, so a move costs one metadata
/// read per 401 of a learned API and nothing otherwise.
extension AuthService {
    /// Before renewing a learned API's rejected token: reads the resource's metadata again. When it
    /// no longer names the server the API was learned from, the API moves to the first server it
    /// names (its metadata checked as learning checks it, a client of its own there), is announced
    /// (`providersChanged` `changed`, a line on stderr), and the rejection ends in 1001 — the old
    /// server's session is not used and its refresh token never sent — which `fetch` and the bridge
    /// answer with a login there, as for any session that ended. Metadata that cannot be read moves nothing.
    func followMove(of config: ProviderConfig) async throws(AuthError) {
        guard let learned = config.learned else { return }
        let learning = ResourceDiscovery(documents: discovery, learning: learned.resource)
        guard let resource = try? await learning.resource(for: learned.resource, challenge: nil, exact: true),
              !resource.authorizationServers.contains(learned.issuer),
              var api = learnedDocument().apis.first(where: { $0.id == config.id && $0.server.issuer == learned.issuer }),
              api.enterpriseIdP == nil else { return }
        let server = try await learning.server(resource.authorizationServers[0])
        if let problem = server.loginProblem(nil) { throw problem }
        let scopes = server.scopes(asking: api.scopes, of: resource)
        let (client, _) = try await client(for: server, scopes: scopes.registered)
        api.server = server
        api.scopes = client.allowing(scopes.login)
        api.dpop = server.acceptsES256DPoP && (self.config.clients.first { $0.issuer == server.issuer }?.dpop ?? self.config.learnDPoP)
        try await updateLearned { doc in
            guard let i = doc.apis.firstIndex(where: { $0.id == api.id && $0.server.issuer == learned.issuer }) else { return }
            api.coverage = doc.apis[i].coverage
            doc.apis[i] = api
            doc.clients[server.issuer] = client
        }
        logger.warn("\(learned.resource) now names the authorization server \(server.issuer) (it named \(learned.issuer)): "
                    + "logging in there afresh; the tokens \(learned.issuer) issued are not sent to it")
        checkLearned()
        guard let moved = registry.providers[config.id] else { throw AuthError.unknownProvider(config.id, .notKnown) }
        throw notLoggedIn(moved)
    }
}
