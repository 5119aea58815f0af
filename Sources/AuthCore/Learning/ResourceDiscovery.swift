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
}

/// The fetches of discovery (RFC 9728 §3, RFC 8414 §3, in MCP's order). Each document is
/// fetched without credentials — a token never goes to a metadata URL — over https or
/// loopback http, with no redirect to another origin, bounded by the HTTP timeout and 256 KiB.
///
/// An API elsewhere cannot point the agent at this machine or its link: when the URL being
/// learned is not on a local address (`Origin.isLocalAddress`), no metadata URL, issuer or
/// endpoint — so no metadata, registration, token or revocation request — may be on one.
struct ResourceDiscovery: Sendable {
    let http: HTTPCalls
    /// The URL being learned is on a local address itself, so local targets are its neighbours.
    let reachesLocal: Bool
    static let maxDocumentBytes = 256 * 1024

    /// Discovery for learning `url` (the URL that answered 401, or the resource `login` names).
    init(http: HTTPCalls, learning url: String) {
        self.http = http
        reachesLocal = Origin(url: url)?.isLocalAddress ?? false
    }

    /// The metadata of the resource protecting `url`. `exact`: `url` is the resource itself
    /// (`login {resource}`), and the document must name it identically; otherwise `url` must
    /// lie under the resource the document names, at a path-segment boundary (§3.3).
    func resource(for url: String, challenge: BearerChallenge?, exact: Bool) async throws(AuthError) -> ProtectedResource {
        let candidates = challenge?.resourceMetadata.map { [$0] } ?? Self.wellKnown(url, "oauth-protected-resource", appended: false)
        var problem = "no protected-resource metadata was found for \(url)"
        for candidate in candidates {
            let document: JSONObject
            switch await fetch(candidate, step: .resourceMetadata) {
            case .found(let d): document = d
            case .absent(let why):
                problem = why
                continue
            case .refused(let e): throw e
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

    /// The metadata of the authorization server `issuer`: RFC 8414's path-inserted form,
    /// OpenID's path-inserted form, then OpenID's path-appended form.
    func server(_ issuer: String) async throws(AuthError) -> AuthorizationServer {
        guard Origin(url: issuer)?.isSecureForBearer == true else {
            throw .discoveryFailed(.serverMetadata, "The authorization server \(issuer) is not https (plain http is allowed on loopback only).")
        }
        var problem = "no metadata was found"
        for candidate in Self.serverCandidates(issuer) {
            let document: JSONObject
            switch await fetch(candidate, step: .serverMetadata) {
            case .found(let d): document = d
            case .absent(let why):
                problem = why
                continue
            case .refused(let e): throw e
            }
            guard document["issuer"]?.stringValue == issuer else {
                throw .discoveryFailed(.serverMetadata, "The metadata at \(candidate) names the issuer \(document["issuer"]?.stringValue ?? "(none)"), not \(issuer).")
            }
            func endpoint(_ key: String) throws(AuthError) -> String? {
                guard let value = document[key]?.stringValue else { return nil }
                guard let origin = Origin(url: value), origin.isSecureForBearer else {
                    throw .discoveryFailed(.serverMetadata, "The \(key) of \(issuer) (\(value)) is not https (plain http is allowed on loopback only).")
                }
                if let refusal = refusal(origin, value) { throw .discoveryFailed(.serverMetadata, "The \(key) of \(issuer): \(refusal)") }
                return value
            }
            guard let token = try endpoint("token_endpoint") else {
                throw .discoveryFailed(.serverMetadata, "The metadata of \(issuer) names no token_endpoint.")
            }
            return AuthorizationServer(issuer: issuer, authorizationEndpoint: try endpoint("authorization_endpoint"), tokenEndpoint: token,
                                       registrationEndpoint: try endpoint("registration_endpoint"),
                                       deviceAuthorizationEndpoint: try endpoint("device_authorization_endpoint"),
                                       revocationEndpoint: try endpoint("revocation_endpoint"),
                                       sendsIss: document["authorization_response_iss_parameter_supported"]?.boolValue == true,
                                       acceptsClientMetadataDocuments: document["client_id_metadata_document_supported"]?.boolValue == true,
                                       acceptsES256DPoP: document["dpop_signing_alg_values_supported"]?.arrayValue?.contains("ES256") == true)
        }
        throw .discoveryFailed(.serverMetadata, "Cannot read the metadata of the authorization server \(issuer): \(problem).")
    }

    enum Fetched {
        case found(JSONObject)
        /// Not there (404, unreachable…): the next candidate may be.
        case absent(String)
        /// There but unacceptable: the attempt ends.
        case refused(AuthError)
    }

    /// One metadata document, following redirects within its origin (a few at most).
    func fetch(_ first: String, step: LearningStep) async -> Fetched {
        var url = first
        for _ in 0..<4 {
            guard let origin = Origin(url: url), origin.isSecureForBearer else {
                return .refused(.discoveryFailed(step, "\(url) is not https (plain http is allowed on loopback only)."))
            }
            if let refusal = refusal(origin, url) { return .refused(.discoveryFailed(step, refusal)) }
            let response: HTTPResponse
            do {
                response = try await http.transport.send(HTTPRequest(url: url, headers: [("Accept", "application/json")], timeout: http.timeout,
                                                                     maxResponseBytes: Self.maxDocumentBytes))
            } catch HTTPTransportError.responseTooLarge {
                return .refused(.discoveryFailed(step, "The document at \(url) is larger than 256 KiB."))
            } catch {
                return .absent(HTTPCalls.describe(error, url: url))
            }
            if (300..<400).contains(response.status), let location = response.headers["location"] {
                let next = location.hasPrefix("/") ? origin.description + location : location
                guard Origin(url: next) == origin else {
                    return .refused(.discoveryFailed(step, "\(url) redirects to another origin (\(Origin(url: next)?.description ?? "?")); not followed."))
                }
                url = next
                continue
            }
            guard response.body.count <= Self.maxDocumentBytes else {
                return .refused(.discoveryFailed(step, "The document at \(url) is larger than 256 KiB."))
            }
            guard response.status == 200 else { return .absent("\(url) answered HTTP \(response.status)") }
            guard let parsed = try? JSONParser.parse(response.body), case .object(let document) = parsed else {
                return .refused(.discoveryFailed(step, "The document at \(url) is not a JSON object."))
            }
            return .found(document)
        }
        return .refused(.discoveryFailed(step, "\(first) redirects too many times."))
    }

    /// `{origin}/.well-known/{name}{path}` then (unless the path is empty) `{origin}/.well-known/{name}`;
    /// with `appended`, `{url}/.well-known/{name}` last.
    static func wellKnown(_ url: String, _ name: String, appended: Bool) -> [String] {
        guard let origin = Origin(url: url) else { return [] }
        var path = Self.path(of: url)
        if path.hasSuffix("/") { path.removeLast() }
        var urls = ["\(origin)/.well-known/\(name)\(path)"]
        if !path.isEmpty { urls.append("\(origin)/.well-known/\(name)") }
        return urls
    }

    /// RFC 8414 §3.1 path-inserted, then OpenID's path-inserted and path-appended forms.
    static func serverCandidates(_ issuer: String) -> [String] {
        var urls = wellKnown(issuer, "oauth-authorization-server", appended: false).prefix(1) + wellKnown(issuer, "openid-configuration", appended: false).prefix(1)
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        let appended = trimmed + "/.well-known/openid-configuration"
        if !urls.contains(appended) { urls.append(appended) }
        return Array(urls)
    }

    /// Why discovery may not send a request to `url` (of `origin`): a local address named by an
    /// API that is not on one. Nil when it may.
    func refusal(_ origin: Origin, _ url: String) -> String? {
        guard !reachesLocal, origin.isLocalAddress else { return nil }
        return "\(url) is on a loopback or link-local address, and the API being learned is not: not requested."
    }

    /// The path of an absolute URL, without query or fragment.
    static func path(of url: String) -> String {
        let rest = url.utf8.dropFirst(OriginCache<Origin?>.authorityPrefix(url)?.utf8.count ?? url.utf8.count)
        return String(decoding: rest.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }, as: UTF8.self)
    }
}
