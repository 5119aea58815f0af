/// Enterprise-Managed Authorization for an API the agent learns (MCP's ext-auth): when the configuration names
/// the enterprise IdP (`learn.enterpriseIdP`) and the API's authorization server lists the jwt-bearer grant, the
/// learned provider gets its tokens by ID-JAG from the IdP's session (`IDJAGProvider`) — no browser, no registration.
extension AuthService {
    /// The login of such an API, kept as any learned one is; nil when it is not one (a browser login follows).
    func learnByIDJAG(_ resource: ProtectedResource, server: AuthorizationServer, taught: String, challenge: BearerChallenge?,
                      context: LoginContext) async throws(AuthError) -> LoginResult? {
        guard let idp = config.learnEnterpriseIdP, server.grantsJWTBearer, let from = providers[idp]?.config else { return nil }
        var api = LearnedAPI(id: learnedDocument().id(for: resource.resource), resource: resource.resource, coverage: [taught], server: server,
                             scopes: challenge.map(\.scopes).flatMap { $0.isEmpty ? nil : $0 } ?? resource.scopesSupported)
        api.enterpriseIdP = idp
        if let taken = registry.providers[api.id], taken.config.learned == nil {
            throw .discoveryFailed(.login, "A configured provider is already called \"\(api.id)\".")
        }
        logger.info("learned \(resource.resource) (authorization server \(server.issuer), Enterprise-Managed Authorization through \(idp)); provider \(api.id)")
        return try await logInAndKeep(api, Self.enterpriseClient(at: server.issuer, idp: from, configured: config.clients), fresh: false, flow: .idJag, context: context)
    }

    /// The client at the API's server: one `clients` configures for it, else the IdP's own — the `client_id` an IdP
    /// that maps one client to the other puts in the ID-JAG.
    static func enterpriseClient(at issuer: String, idp: ProviderConfig, configured: [ConfiguredClient]) -> LearnedClient {
        if let c = configured.first(where: { $0.issuer == issuer }) {
            return LearnedClient(clientId: c.clientId, clientSecret: c.clientSecret, redirectPort: nil, scopes: [], registered: false)
        }
        return LearnedClient(clientId: idp.clientId ?? "", clientSecret: idp.clientSecret, redirectPort: nil, scopes: [], registered: false)
    }
}
