import JSON

/// What makes a learned provider different from a configured one: the resource every
/// authorization and token request names (RFC 8707), the URLs its token may go to, and the
/// server whose `iss` (RFC 9207) answers must carry.
public struct LearnedResource: Sendable, Equatable {
    public var resource: String
    /// What it covers (`PathCoverage`): the URLs whose 401 taught it, each with the paths below
    /// it — never more than `resource`, which may name a whole origin shared with other tenants.
    public var coverage: [String]
    public var issuer: String
    /// The server promised `iss` on authorization responses: one without it is refused.
    public var sendsIss: Bool

    /// Whether this provider's token may go to `url`.
    func covers(_ url: String) -> Bool {
        Origin(url: url) == Origin(url: resource) && PathCoverage.verdict(url, prefixes: coverage.map(PathCoverage.prefix(of:))) == .covered
    }
}

/// A client the agent uses at one authorization server: configured (`clients`), a Client ID
/// Metadata Document URL, or one it registered (RFC 7591) and keeps for every later login.
struct LearnedClient: Sendable, Equatable {
    var clientId: String
    var clientSecret: String?
    /// The loopback port registered in its `redirect_uris`: chosen once, kept.
    var redirectPort: Int?
    /// The scope it was registered with, when it was registered here.
    var scopes: [String]
    var registered: Bool
    /// RFC 7592: where the registration can be read, and the token that reads it, when the server
    /// gave them — the exact question "do you still know this client?" (`ClientStanding`).
    var registrationURI: String? = nil
    var registrationToken: String? = nil
    /// RFC 9126 §6: the registration says this client's authorization requests must be pushed.
    var requiresPAR = false

    /// `scopes` without those this registration does not allow — a server that refused to register a
    /// scope (the registration narrowed to what it lists) refuses a login asking for it too; all of
    /// them when the registration says nothing of its scope (configured, a metadata document, or none given).
    func allowing(_ scopes: [String]) -> [String] {
        registered && !self.scopes.isEmpty ? scopes.filter(self.scopes.contains) : scopes
    }
}

/// One learned API, as persisted.
struct LearnedAPI: Sendable, Equatable {
    var id: String
    /// The metadata's `resource`: the tokens' audience, and the bound of `coverage`.
    var resource: String
    /// The URLs it covers (`LearnedResource.coverage`): each one the server answered 401 for
    /// with this resource and authorization server. Documents from before it cover `resource`.
    var coverage: [String]
    var server: AuthorizationServer
    /// What a login asks for: the challenge's scope, else the resource's `scopes_supported`.
    var scopes: [String]
    /// DPoP-bound tokens, decided when it was learned (the server accepts ES256 proofs and the
    /// learning process's configuration allowed it) and kept, so every process builds the same provider.
    var dpop = false
    /// The enterprise IdP whose session its tokens come from by ID-JAG (`learn.enterpriseIdP`, decided when learned): nil for a browser login.
    var enterpriseIdP: String? = nil

    /// `coverage` nil: the whole resource, as before coverage was kept.
    init(id: String, resource: String, coverage: [String]? = nil, server: AuthorizationServer, scopes: [String], dpop: Bool = false) {
        (self.id, self.resource, self.coverage, self.server, self.scopes, self.dpop) = (id, resource, coverage ?? [resource], server, scopes, dpop)
    }
}

/// The store document `StoreKeys.learned`: the learned APIs and the clients, per issuer.
/// Written under the store lock of that key by whoever learns, read by every agent process.
struct LearnedDocument: Sendable, Equatable {
    var apis: [LearnedAPI] = []
    var clients: [String: LearnedClient] = [:]
    /// The issuers that refused RFC 8707's `resource` (`OAuthClient.grant`), so that no process asks them with it again.
    var refusingResource: Set<String> = []

    func encoded() -> [UInt8] {
        let apis: [JSONValue] = self.apis.map { a in
            var server: JSONObject = ["issuer": .string(a.server.issuer), "tokenEndpoint": .string(a.server.tokenEndpoint),
                                      "sendsIss": .bool(a.server.sendsIss), "clientMetadataDocuments": .bool(a.server.acceptsClientMetadataDocuments),
                                      "dpopES256": .bool(a.server.acceptsES256DPoP), "requiresPAR": .bool(a.server.requiresPAR)]
            for (key, value) in [("authorizationEndpoint", a.server.authorizationEndpoint), ("registrationEndpoint", a.server.registrationEndpoint),
                                 ("deviceAuthorizationEndpoint", a.server.deviceAuthorizationEndpoint), ("revocationEndpoint", a.server.revocationEndpoint),
                                 ("pushedAuthorizationEndpoint", a.server.pushedAuthorizationEndpoint), ("userinfoEndpoint", a.server.userinfoEndpoint)] {
                if let value { server[key] = .string(value) }
            }
            return .object(["id": .string(a.id), "resource": .string(a.resource), "covers": .array(a.coverage.map(JSONValue.string)), "server": .object(server),
                            "scopes": .array(a.scopes.map(JSONValue.string)), "dpop": .bool(a.dpop),
                            "enterpriseIdP": a.enterpriseIdP.map(JSONValue.string) ?? .null])
        }
        var clients = JSONObject()
        for issuer in self.clients.keys.sorted() {
            let c = self.clients[issuer]!
            var o: JSONObject = ["clientId": .string(c.clientId), "scopes": .array(c.scopes.map(JSONValue.string)), "registered": .bool(c.registered)]
            if let secret = c.clientSecret { o["clientSecret"] = .string(secret) }
            if let port = c.redirectPort { o["redirectPort"] = .int(Int64(port)) }
            if let uri = c.registrationURI, let token = c.registrationToken {
                (o["registrationClientUri"], o["registrationAccessToken"]) = (.string(uri), .string(token))
            }
            if c.requiresPAR { o["requiresPAR"] = true }
            clients[issuer] = .object(o)
        }
        var root: JSONObject = ["version": .int(1), "apis": .array(apis), "clients": .object(clients)]
        if !refusingResource.isEmpty { root["refusingResource"] = .array(refusingResource.sorted().map(JSONValue.string)) }
        return JSONSerializer.bytes(.object(root))
    }

    /// The document in `bytes`; what cannot be read is left out (an API learned again is cheap).
    static func decode(_ bytes: [UInt8]) -> LearnedDocument {
        guard let root = (try? JSONParser.parse(bytes))?.objectValue else { return LearnedDocument() }
        var doc = LearnedDocument()
        for item in root["apis"]?.arrayValue ?? [] {
            guard let o = item.objectValue, let id = o["id"]?.stringValue, let resource = o["resource"]?.stringValue,
                  let s = o["server"]?.objectValue, let issuer = s["issuer"]?.stringValue, let token = s["tokenEndpoint"]?.stringValue else { continue }
            var server = AuthorizationServer(issuer: issuer, authorizationEndpoint: s["authorizationEndpoint"]?.stringValue, tokenEndpoint: token,
                                             registrationEndpoint: s["registrationEndpoint"]?.stringValue,
                                             deviceAuthorizationEndpoint: s["deviceAuthorizationEndpoint"]?.stringValue,
                                             revocationEndpoint: s["revocationEndpoint"]?.stringValue,
                                             sendsIss: s["sendsIss"]?.boolValue == true,
                                             acceptsClientMetadataDocuments: s["clientMetadataDocuments"]?.boolValue == true,
                                             acceptsES256DPoP: s["dpopES256"]?.boolValue == true)
            server.pushedAuthorizationEndpoint = s["pushedAuthorizationEndpoint"]?.stringValue
            server.requiresPAR = s["requiresPAR"]?.boolValue == true
            server.userinfoEndpoint = s["userinfoEndpoint"]?.stringValue
            var api = LearnedAPI(id: id, resource: resource, coverage: o["covers"]?.arrayValue?.compactMap(\.stringValue), server: server,
                                 scopes: o["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [], dpop: o["dpop"]?.boolValue == true)
            api.enterpriseIdP = o["enterpriseIdP"]?.stringValue
            doc.apis.append(api)
        }
        for (issuer, value) in root["clients"]?.objectValue?.members.map({ ($0, $1) }) ?? [] {
            guard let o = value.objectValue, let id = o["clientId"]?.stringValue else { continue }
            doc.clients[issuer] = LearnedClient(clientId: id, clientSecret: o["clientSecret"]?.stringValue,
                                                redirectPort: o["redirectPort"]?.intValue.map { Int($0) },
                                                scopes: o["scopes"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                                                registered: o["registered"]?.boolValue == true,
                                                registrationURI: o["registrationClientUri"]?.stringValue,
                                                registrationToken: o["registrationAccessToken"]?.stringValue,
                                                requiresPAR: o["requiresPAR"]?.boolValue == true)
        }
        doc.refusingResource = Set(root["refusingResource"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        return doc
    }

    /// The stable id of `resource`: its host, with the port when not the scheme's default,
    /// then its path when another learned API already has that host and port.
    func id(for resource: String) -> String {
        if let known = apis.first(where: { $0.resource == resource }) { return known.id }
        guard let origin = Origin(url: resource) else { return "learned" }
        var base = origin.host.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-") }.lowercased()
        if origin.port != Origin.defaultPort(for: origin.scheme) { base += "-\(origin.port)" }
        guard apis.contains(where: { $0.id == base }) else { return base }
        let path = Discovery.path(of: resource).split(separator: "/").joined(separator: "-")
            .filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_") }.lowercased()
        var id = String((base + "-" + (path.isEmpty ? "root" : path)).prefix(64))
        var n = 2
        while apis.contains(where: { $0.id == id }) {
            id = String((base + "-\(n)").prefix(64))
            n += 1
        }
        return id
    }

    /// The provider a learned API becomes: an ordinary authorization code provider (with the
    /// device flow beside it when the server offers one), its endpoints fixed, its origin the
    /// resource's. Only covered URLs under the resource count; nil when none is.
    func config(_ api: LearnedAPI, defaultOpenBrowser: Bool) -> ProviderConfig? {
        let coverage = api.coverage.filter { PathCoverage.covers(resource: api.resource, url: $0) }
        guard let client = clients[api.server.issuer], let origin = Origin(url: api.resource), !coverage.isEmpty else { return nil }
        var p = ProviderConfig(id: api.id, displayName: api.resource, flow: .authorizationCode, origins: [origin],
                               tokenEndpoint: api.server.tokenEndpoint, revocationEndpoint: api.server.revocationEndpoint,
                               clientId: client.clientId, clientSecret: client.clientSecret, scopes: api.scopes,
                               authorizationEndpoint: api.server.authorizationEndpoint,
                               deviceAuthorizationEndpoint: api.server.deviceAuthorizationEndpoint,
                               redirectPort: client.redirectPort, openBrowser: defaultOpenBrowser)
        if let idp = api.enterpriseIdP {
            // Enterprise-Managed Authorization: the ID-JAG's audience is the server, its resource the API.
            p.flows = [.idJag]
            p.subject = SubjectConfig(from: idp, tokenType: .idToken, resource: api.resource)
        } else {
            if api.server.deviceAuthorizationEndpoint != nil { p.flows.append(.deviceCode) }
            // Who signed in, named as a configured provider's person is (status, "Logged in … as").
            p.userinfoEndpoint = api.server.userinfoEndpoint
        }
        // A known identity provider's habits, recognised from the issuer as for a configured provider.
        p.profiles = ProviderProfile.recognised(api.server.issuer).map { [$0] } ?? []
        p.dpop = api.dpop
        p.pushedAuthorizationRequestEndpoint = api.server.pushedAuthorizationEndpoint
        p.par = api.server.requiresPAR || client.requiresPAR
        p.learned = LearnedResource(resource: api.resource, coverage: coverage, issuer: api.server.issuer, sendsIss: api.server.sendsIss)
        return p
    }
}
