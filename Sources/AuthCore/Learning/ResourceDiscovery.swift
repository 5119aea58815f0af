import JSON

/// Where a learning attempt failed (`data.step` of error 1014).
public enum LearningStep: String, Sendable {
    case resourceMetadata, serverMetadata, registration, login
}

/// RFC 9728 protected-resource metadata, reduced to what a login needs.
struct ProtectedResource: Sendable, Equatable {
    var resource: String
    var authorizationServers: [String]
    var scopesSupported: [String]
}

/// RFC 8414 / OpenID Connect metadata of an authorization server, checked: every endpoint
/// https (or loopback http), the issuer exactly the one asked for.
struct AuthorizationServer: Sendable, Equatable {
    var issuer: String
    var authorizationEndpoint: String?
    var tokenEndpoint: String
    var registrationEndpoint: String?
    var deviceAuthorizationEndpoint: String?
    var revocationEndpoint: String?
    /// RFC 9207: the server says it sends `iss` on authorization responses, so one without it (or another) is refused.
    var sendsIss: Bool
    /// Client ID Metadata Documents (`client_id_metadata_document_supported`).
    var acceptsClientMetadataDocuments: Bool
    /// `dpop_signing_alg_values_supported` lists ES256, the one algorithm the agent's DPoP keys use.
    var acceptsES256DPoP = false
    /// RFC 9126: where authorization requests are pushed, and whether the server takes no other kind.
    var pushedAuthorizationEndpoint: String? = nil
    var requiresPAR = false
    /// `code_challenge_methods_supported` lists S256: without it a browser login is refused (MCP
    /// 2025-11-25 and later: a server that does not say it supports PKCE is taken not to).
    var supportsPKCE = false
    /// The server's own `scopes_supported`: what a registration refused for its scope is retried with.
    var scopesSupported: [String] = []
    /// `grant_types_supported` lists the jwt-bearer grant (RFC 7523): with `learn.enterpriseIdP`, its APIs'
    /// tokens come by Enterprise-Managed Authorization (`flow: idJag`) instead of a browser login.
    var grantsJWTBearer = false
    /// OpenID userinfo: who signed in, asked with the new token after a login (its failure only leaves the person unnamed).
    var userinfoEndpoint: String? = nil
}

/// Learning's discovery (RFC 9728 §3, then the server's metadata, in MCP's order): the resource's
/// metadata and its checks, and learned-only checks over the one `Discovery` (its fetching rules,
/// candidate order, issuer check and cache): every endpoint https (or loopback http).
///
/// An API elsewhere cannot point the agent at this machine or its link: when the URL being
/// learned is not on a local address (`Origin.isLocalAddress`), no metadata URL, issuer or
/// endpoint — so no metadata, registration, token or revocation request — may be on one.
struct ResourceDiscovery: Sendable {
    let documents: Discovery
    /// The URL being learned is on a local address itself, so local targets are its neighbours.
    let reachesLocal: Bool

    /// Discovery for learning `url` (the URL that answered 401, or the resource `login` names).
    init(documents: Discovery, learning url: String) {
        self.documents = documents
        reachesLocal = Origin(url: url)?.isLocalAddress ?? false
    }

    /// The metadata of the resource protecting `url`. `exact`: `url` is the resource itself
    /// (`login {resource}`), and the document must name it identically; otherwise `url` must
    /// lie under the resource the document names, at a path-segment boundary (§3.3).
    func resource(for url: String, challenge: BearerChallenge?, exact: Bool) async throws(AuthError) -> ProtectedResource {
        let candidates = challenge?.resourceMetadata.map { [$0] } ?? Discovery.wellKnown(url, "oauth-protected-resource")
        var problem = "no protected-resource metadata was found for \(url)"
        for candidate in candidates {
            let document: JSONObject
            do {
                document = try await documents.document(candidate, reachesLocal: reachesLocal)
            } catch {
                switch error {
                case .notFound(let why):
                    problem = why
                    continue
                case .refused(let refusal): throw .discoveryRefused(.resourceMetadata, refusal)
                }
            }
            guard let resource = document["resource"]?.stringValue else {
                throw .discoveryFailed(.resourceMetadata, "The resource metadata at \(candidate) names no resource.")
            }
            let matches = exact ? resource == url : PathCoverage.covers(resource: resource, url: url)
            guard matches else {
                throw .discoveryFailed(.resourceMetadata, "The resource metadata at \(candidate) describes \(resource), not \(url) (RFC 9728 §3.3).")
            }
            let servers = document["authorization_servers"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard !servers.isEmpty else {
                throw .discoveryFailed(.resourceMetadata, "The resource metadata at \(candidate) names no authorization server.")
            }
            return ProtectedResource(resource: resource, authorizationServers: servers,
                                     scopesSupported: document["scopes_supported"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
        throw .discoveryFailed(.resourceMetadata, "Cannot learn what protects \(url): \(problem).")
    }

    /// The metadata of the authorization server `issuer` (`Discovery.server`), with the
    /// endpoints a learned provider will call checked.
    func server(_ issuer: String) async throws(AuthError) -> AuthorizationServer {
        guard Origin(url: issuer)?.isSecureForBearer == true else {
            throw .discoveryFailed(.serverMetadata, "The authorization server \(issuer) is not https (plain http is allowed on loopback only).")
        }
        let document: JSONObject
        do {
            document = try await documents.server(issuer, reachesLocal: reachesLocal)
        } catch {
            switch error {
            case .notFound(let problem):
                throw .discoveryFailed(.serverMetadata, "Cannot read the metadata of the authorization server \(issuer): \(problem).")
            case .refused(let refusal): throw .discoveryRefused(.serverMetadata, refusal)
            }
        }
        return try checked(document, of: issuer)
    }

    /// `document` as a learned provider may use it: a token endpoint, every endpoint https (or
    /// loopback http), none on a local address for an API elsewhere.
    private func checked(_ document: JSONObject, of issuer: String) throws(AuthError) -> AuthorizationServer {
        func endpoint(_ key: String) throws(AuthError) -> String? {
            guard let value = document[key]?.stringValue else { return nil }
            if let refusal = Discovery.refusal(value, reachesLocal: reachesLocal) { throw .endpointRefused(key, of: issuer, refusal) }
            return value
        }
        guard let token = try endpoint("token_endpoint") else {
            throw .discoveryFailed(.serverMetadata, "The metadata of \(issuer) names no token_endpoint.")
        }
        var server = AuthorizationServer(issuer: issuer, authorizationEndpoint: try endpoint("authorization_endpoint"), tokenEndpoint: token,
                                   registrationEndpoint: try endpoint("registration_endpoint"),
                                   deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
                                   revocationEndpoint: try endpoint("revocation_endpoint"),
                                   sendsIss: document["authorization_response_iss_parameter_supported"]?.boolValue == true,
                                   acceptsClientMetadataDocuments: document["client_id_metadata_document_supported"]?.boolValue == true,
                                   acceptsES256DPoP: document["dpop_signing_alg_values_supported"]?.arrayValue?.contains("ES256") == true)
        server.pushedAuthorizationEndpoint = try endpoint("pushed_authorization_request_endpoint")
        server.requiresPAR = document["require_pushed_authorization_requests"]?.boolValue == true
        server.supportsPKCE = document["code_challenge_methods_supported"]?.arrayValue?.contains("S256") == true
        server.scopesSupported = document["scopes_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        server.userinfoEndpoint = try endpoint("userinfo_endpoint")
        server.grantsJWTBearer = document["grant_types_supported"]?.arrayValue?.contains(.string(TokenExchange.jwtBearer)) == true
        return server
    }
}

extension AuthorizationServer {
    /// Why a learned API cannot log in here through `flow` (nil: the browser login), checked before
    /// anything is registered: no device flow, no authorization endpoint, or no PKCE.
    func loginProblem(_ flow: Flow?) -> AuthError? {
        if flow == .deviceCode, deviceAuthorizationEndpoint == nil {
            return .discoveryFailed(.serverMetadata, "\(issuer) offers no device flow.")
        }
        if flow != .deviceCode, authorizationEndpoint == nil {
            return .discoveryFailed(.serverMetadata, "The metadata of \(issuer) names no authorization_endpoint.")
        }
        if flow != .deviceCode, !supportsPKCE {
            return .discoveryFailed(.serverMetadata, "The metadata of \(issuer) does not list S256 in code_challenge_methods_supported: "
                + "a browser login without PKCE could be taken over, so the agent does not run one (MCP's rule).")
        }
        return nil
    }

    /// What a learned API's login asks for (`asked`, with `offline_access` when this server lists
    /// it: many servers give a refresh token only for it — MCP 2026-07-28's rule) and what its
    /// registration names (the resource's `scopes_supported`, else the login's).
    func scopes(asking asked: [String], of resource: ProtectedResource) -> (login: [String], registered: [String]) {
        var login = asked.filter { $0 != "offline_access" }
        var registered = resource.scopesSupported.isEmpty ? login : resource.scopesSupported.filter { $0 != "offline_access" }
        if scopesSupported.contains("offline_access") {
            login.append("offline_access")
            registered.append("offline_access")
        }
        return (login, registered)
    }
}
