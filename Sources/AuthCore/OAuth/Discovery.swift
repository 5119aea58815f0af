import JSON
import Locking

/// Why no usable metadata document came back. Neutral on purpose: a configured provider
/// tells it as 1005 (`endpointsNotDiscovered`), learning as 1014 (`discoveryRefused`).
enum MetadataFailure: Error, Sendable, Equatable {
    /// No candidate had a document (404, unreachable, not JSON…): the last one's problem.
    case notFound(String)
    /// A document was there but may not be used; the search ends rather than trying the next form.
    case refused(MetadataRefusal)
}

/// A metadata URL or document discovery will not use, and where.
enum MetadataRefusal: Sendable, Equatable {
    /// Not https, nor plain http on loopback.
    case insecure(url: String)
    /// On a loopback or link-local address, named by an API that is not on one.
    case localAddress(url: String)
    case tooLarge(url: String)
    case redirectElsewhere(url: String, to: String)
    case tooManyRedirects(url: String)
    /// The document's `issuer` is not exactly the one asked for (RFC 8414 §3.3).
    case otherIssuer(url: String, named: String?, expected: String)
}

/// The one reader of discovery documents — authorization-server metadata (RFC 8414 / OpenID
/// Connect) for configured providers, learned providers and `config add`, and RFC 9728 resource
/// metadata for learning — under one set of rules, so the two kinds of provider cannot drift:
/// no credentials (a token never goes to a metadata URL), https or loopback http, redirects
/// followed only within the origin (three at most), 256 KiB per document, the HTTP timeout.
///
/// A server's metadata is kept per issuer for the life of the process, once its `issuer`
/// matched: a configured and a learned provider of one server read it once between them.
final class Discovery: Sendable {
    let http: HTTPCalls
    static let maxDocumentBytes = 256 * 1024
    private let cache = Locked<[String: JSONObject]>([:])
    /// Issuers that refused RFC 8707's `resource` (`OAuthClient.grant`): asked without it from then on.
    private let refusingResource = Locked<Set<String>>([])

    init(http: HTTPCalls) { self.http = http }

    /// Where a provider keeps its metadata (its profile says, `ProviderProfile.discovery`).
    enum Place: String, Sendable, Equatable {
        /// Every form, in MCP's order (`serverCandidates`).
        case anywhere
        /// OpenID's path-appended form first (`{issuer}/.well-known/openid-configuration`): Entra ID,
        /// Okta and Keycloak serve no RFC 8414 path-inserted document, and need not cost two 404s.
        case openIDAppended
        /// None: the provider's endpoints are fixed (GitHub has no OpenID discovery for user login).
        case none
    }

    /// The metadata of the authorization server `issuer`, from the cache or the first of
    /// `serverCandidates` that has a document. `reachesLocal` false (an API elsewhere named
    /// the issuer): a loopback or link-local issuer is refused before any request or cache look.
    /// `place` orders the forms tried; a document may name one of `templates` as its issuer when
    /// `issuer` matches that template (Entra's multi-tenant documents name `…/{tenantid}/v2.0`).
    func server(_ issuer: String, reachesLocal: Bool = true, place: Place = .anywhere, templates: [String] = []) async throws(MetadataFailure) -> JSONObject {
        let candidates = Self.serverCandidates(issuer, place: place)
        if let first = candidates.first, let refusal = Self.refusal(first, reachesLocal: reachesLocal) { throw .refused(refusal) }
        if let cached = cached(issuer) { return cached }
        var problem = "no metadata was found"
        for url in candidates {
            let metadata: JSONObject
            do {
                metadata = try await document(url, reachesLocal: reachesLocal)
            } catch {
                guard case .notFound(let why) = error else { throw error }
                problem = why
                continue
            }
            let named = metadata["issuer"]?.stringValue
            guard named == issuer || templates.contains(where: { $0 == named && ProviderProfile.matches(issuer, template: $0) }) else {
                throw .refused(.otherIssuer(url: url, named: metadata["issuer"]?.stringValue, expected: issuer))
            }
            cache.withLock { $0[issuer] = metadata }
            return metadata
        }
        throw .notFound(problem)
    }

    /// For a configured provider and `config add`: `server(issuer)`, a failure told as 1005.
    func metadata(issuer: String, place: Place = .anywhere, templates: [String] = []) async throws(AuthError) -> JSONObject {
        do {
            return try await server(issuer, place: place, templates: templates)
        } catch {
            throw AuthError.endpointsNotDiscovered(issuer, error)
        }
    }

    /// Whether `issuer` refused `resource` before, so that it is no longer sent there.
    func refusesResource(_ issuer: String) -> Bool { refusingResource.withLock { $0.contains(issuer) } }

    /// Remembers that `issuer` refuses `resource`; true the first time.
    func rememberRefusedResource(_ issuer: String) -> Bool { refusingResource.withLock { $0.insert(issuer).inserted } }

    /// The document already read for `issuer`, without asking the network.
    func cached(_ issuer: String) -> JSONObject? { cache.withLock { $0[issuer] } }

    /// Drops what was read for `issuer`: a caller's own checks refused it, and the next
    /// attempt must read the server again rather than be refused from memory.
    func forget(_ issuer: String) { cache.withLock { $0[issuer] = nil } }

    /// One metadata document (a JSON object), following redirects within its origin.
    /// A document that is not a JSON object counts as absent, not refused: portals answer
    /// well-known paths they do not serve with an HTML page, and the next form may be the one.
    func document(_ first: String, reachesLocal: Bool) async throws(MetadataFailure) -> JSONObject {
        var url = first
        for _ in 0..<4 {
            if let refusal = Self.refusal(url, reachesLocal: reachesLocal) { throw .refused(refusal) }
            guard let origin = Origin(url: url) else { throw .refused(.insecure(url: url)) }
            let response: HTTPResponse
            do {
                response = try await http.transport.send(HTTPRequest(url: url, headers: [("Accept", "application/json")], timeout: http.timeout,
                                                                     maxResponseBytes: Self.maxDocumentBytes))
            } catch HTTPTransportError.responseTooLarge {
                throw .refused(.tooLarge(url: url))
            } catch {
                throw .notFound(HTTPCalls.describe(error, url: url))
            }
            if (300..<400).contains(response.status), let location = response.headers["location"] {
                let next = location.hasPrefix("/") ? origin.description + location : location
                guard Origin(url: next) == origin else {
                    throw .refused(.redirectElsewhere(url: url, to: Origin(url: next)?.description ?? "?"))
                }
                url = next
                continue
            }
            guard response.body.count <= Self.maxDocumentBytes else { throw .refused(.tooLarge(url: url)) }
            guard response.status == 200 else { throw .notFound("\(url) answered HTTP \(response.status)") }
            guard let parsed = try? JSONParser.parse(response.body), case .object(let document) = parsed else {
                throw .notFound("\(url) is not a JSON object")
            }
            return document
        }
        throw .refused(.tooManyRedirects(url: first))
    }

    /// Where a server's metadata is looked for, in MCP's order (2025-11-25, "Authorization
    /// Server Metadata Discovery"): RFC 8414's path-inserted form, OpenID's path-inserted form,
    /// then OpenID's path-appended form (the same URL as the inserted one for an issuer without
    /// a path, so listed once). One order for every provider: servers that serve only the
    /// appended form (Entra ID, Keycloak, Okta) cost two 404s at their first discovery per process.
    static func serverCandidates(_ issuer: String, place: Place = .anywhere) -> [String] {
        guard let origin = Origin(url: issuer) else { return [] }
        var path = path(of: issuer)
        if path.hasSuffix("/") { path.removeLast() }
        var urls = ["\(origin)/.well-known/oauth-authorization-server\(path)", "\(origin)/.well-known/openid-configuration\(path)"]
        let appended = "\(origin)\(path)/.well-known/openid-configuration"
        switch place {
        case .none: return []
        case .openIDAppended: return [appended] + urls.filter { $0 != appended }
        case .anywhere: return urls.contains(appended) ? urls : urls + [appended]
        }
    }

    /// RFC 9728 §3.1: `{origin}/.well-known/{name}{path}`, then (when the path is not empty)
    /// `{origin}/.well-known/{name}` at the root.
    static func wellKnown(_ url: String, _ name: String) -> [String] {
        guard let origin = Origin(url: url) else { return [] }
        var path = path(of: url)
        if path.hasSuffix("/") { path.removeLast() }
        var urls = ["\(origin)/.well-known/\(name)\(path)"]
        if !path.isEmpty { urls.append("\(origin)/.well-known/\(name)") }
        return urls
    }

    /// Why discovery may not request `url`: not https (plain http only on loopback), or a local
    /// address when `reachesLocal` is false. Nil when it may.
    static func refusal(_ url: String, reachesLocal: Bool) -> MetadataRefusal? {
        guard let origin = Origin(url: url), origin.isSecureForBearer else { return .insecure(url: url) }
        guard reachesLocal || !origin.isLocalAddress else { return .localAddress(url: url) }
        return nil
    }

    /// The path of an absolute URL, without query or fragment.
    static func path(of url: String) -> String {
        let rest = url.utf8.dropFirst(OriginCache<Origin?>.authorityPrefix(url)?.utf8.count ?? url.utf8.count)
        return String(decoding: rest.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }, as: UTF8.self)
    }
}
