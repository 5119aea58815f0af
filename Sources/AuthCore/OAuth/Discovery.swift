#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking

/// Authorization-server metadata from an issuer (OpenID Connect Discovery,
/// falling back to RFC 8414), fetched once per process and issuer.
///
/// The document must name exactly the configured issuer: a mismatch means the
/// wrong server (or an attacker) answered, and nothing from it is used.
final class Discovery: Sendable {
    private let http: HTTPCalls
    private let cache = Locked<[String: JSONObject]>([:])

    init(http: HTTPCalls) { self.http = http }

    func metadata(issuer: String) async throws(AuthError) -> JSONObject {
        if let cached = cache.withLock({ $0[issuer] }) { return cached }
        var lastProblem = "no discovery document"
        for url in Self.candidateURLs(issuer: issuer) {
            let response: HTTPResponse
            do {
                response = try await http.send("GET", url, headers: [("Accept", "application/json")], body: nil)
            } catch {
                switch error { case .transient(let why): lastProblem = why }
                continue
            }
            guard response.status == 200 else {
                lastProblem = "\(url) answered HTTP \(response.status)"
                continue
            }
            guard let document = try? JSONParser.parse(response.body), case .object(let metadata) = document else {
                lastProblem = "\(url) is not a JSON object"
                continue
            }
            guard metadata["issuer"]?.stringValue == issuer else {
                throw AuthError.endpointsNotDiscovered(issuer, .otherIssuer(url: url))
            }
            cache.withLock { $0[issuer] = metadata }
            return metadata
        }
        throw AuthError.endpointsNotDiscovered(issuer, .noDocument(lastProblem))
    }

    /// The document already fetched for `issuer`, without asking the network.
    func cached(_ issuer: String) -> JSONObject? { cache.withLock { $0[issuer] } }

    /// `{issuer}/.well-known/openid-configuration`, then RFC 8414's form, which
    /// puts the well-known segment between the host and the issuer's path.
    static func candidateURLs(issuer: String) -> [String] {
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        var urls = [trimmed + "/.well-known/openid-configuration"]
        if let schemeEnd = trimmed.firstRange(of: "://") {
            let afterScheme = trimmed[schemeEnd.upperBound...]
            if let slash = afterScheme.firstIndex(of: "/") {
                let origin = trimmed[..<slash]
                urls.append(origin + "/.well-known/oauth-authorization-server" + afterScheme[slash...])
            } else {
                urls.append(trimmed + "/.well-known/oauth-authorization-server")
            }
        }
        return urls
    }
}
