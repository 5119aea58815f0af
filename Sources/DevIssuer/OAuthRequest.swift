#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wire

/// A client that proved who it is at the token, revocation, device or PAR endpoint.
struct AuthenticatedClient: Sendable {
    let id: String
    /// Has a secret (or signed with its key); only these may use client_credentials.
    let isConfidential: Bool
    var method: Method = .none

    enum Method: String, Sendable, Equatable {
        case none, secretBasic = "client_secret_basic", secretPost = "client_secret_post"
        case privateKeyJWT = "private_key_jwt", clientSecretJWT = "client_secret_jwt"
    }
}

/// A form-encoded OAuth request (token or revocation endpoint) after parsing
/// and client authentication, the steps both endpoints share.
struct OAuthRequest: Sendable {
    let parameters: [String: String]
    let client: AuthenticatedClient

    enum Parsed: Sendable {
        case accepted(OAuthRequest)
        case rejected(HTTPResponse)
    }

    /// Every OAuth response is a credential or about one: never cache (RFC 6749 §5.1).
    static let noStore: [(name: String, value: String)] = [("Cache-Control", "no-store"), ("Pragma", "no-cache")]

    static func error(_ status: Int, _ code: String, _ description: String,
                      headers: [(name: String, value: String)] = []) -> HTTPResponse {
        .error(status, code, description, headers: noStore + headers)
    }

    /// Parses the form body and authenticates the client, by HTTP Basic
    /// (`client_secret_basic`), by `client_id`/`client_secret` in the body
    /// (`client_secret_post`, or `none` for public clients), or by a signed assertion
    /// (`private_key_jwt`, `client_secret_jwt`: `ClientAssertionCheck`). A FAPI 2.0
    /// client (`ClientPolicy.fapi2`) is refused any method but `private_key_jwt`.
    static func parse(_ request: HTTPRequest, _ context: RouteContext) -> Parsed {
        switch parseAny(request, context) {
        case .accepted(let oauth) where context.state.clientPolicies.policy(oauth.client.id).fapi2 && oauth.client.method != .privateKeyJWT:
            return .rejected(invalidClient(ClientPolicy.fapiClientAuth + " (not \(oauth.client.method.rawValue))"))
        case let other:
            return other
        }
    }

    private static func parseAny(_ request: HTTPRequest, _ context: RouteContext) -> Parsed {
        let clients = context.state.clients
        if let type = request.mediaType, type != "application/x-www-form-urlencoded" {
            return .rejected(error(400, "invalid_request", "the body must be application/x-www-form-urlencoded"))
        }
        guard let pairs = FormEncoding.decode(request.body) else {
            return .rejected(error(400, "invalid_request", "malformed form body"))
        }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            // RFC 6749 §3.2: parameters MUST NOT be included more than once.
            guard parameters.updateValue(value, forKey: name) == nil else {
                return .rejected(error(400, "invalid_request", "parameter \(name) is repeated"))
            }
        }

        if let type = parameters["client_assertion_type"] {
            guard type == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer", let assertion = parameters["client_assertion"] else {
                return .rejected(error(400, "invalid_request", "client_assertion_type must be urn:ietf:params:oauth:client-assertion-type:jwt-bearer, with client_assertion"))
            }
            if request.authorization(scheme: "Basic") != nil || parameters["client_secret"] != nil {
                return .rejected(error(400, "invalid_request", "use one client authentication method"))
            }
            switch ClientAssertionCheck.verify(assertion, endpoint: context.issuer + request.path, context: context) {
            case .failure(let refusal): return .rejected(invalidClient(refusal.description))
            case .success(let (id, method)):
                if let bodyID = parameters["client_id"], bodyID != id {
                    return .rejected(error(400, "invalid_request", "client_id does not match the client assertion"))
                }
                let client = AuthenticatedClient(id: id, isConfidential: true, method: method == .privateKeyJWT ? .privateKeyJWT : .clientSecretJWT)
                return .accepted(OAuthRequest(parameters: parameters, client: client))
            }
        }
        let claimed: (id: String, secret: String?)
        let basic = request.authorization(scheme: "Basic") != nil
        if let basic = request.authorization(scheme: "Basic") {
            guard let credentials = decodeBasic(basic) else {
                return .rejected(invalidClient("malformed Basic credentials"))
            }
            if parameters["client_secret"] != nil {
                return .rejected(error(400, "invalid_request", "use one client authentication method, not Basic and client_secret"))
            }
            if let bodyID = parameters["client_id"], bodyID != credentials.id {
                return .rejected(error(400, "invalid_request", "client_id does not match the Basic credentials"))
            }
            claimed = (credentials.id, credentials.secret)
        } else if let id = parameters["client_id"] {
            claimed = (id, parameters["client_secret"])
        } else {
            return .rejected(invalidClient("client authentication required"))
        }

        switch clients[claimed.id] {
        case .none:
            return .rejected(invalidClient("unknown client"))
        case .some(.none):
            if let secret = claimed.secret, !secret.isEmpty {
                return .rejected(invalidClient("public client must not send a secret"))
            }
            return .accepted(OAuthRequest(parameters: parameters, client: AuthenticatedClient(id: claimed.id, isConfidential: false)))
        case .some(.some(let expected)):
            guard let secret = claimed.secret, SecretComparison.equal(expected, secret) else {
                return .rejected(invalidClient("client authentication failed"))
            }
            return .accepted(OAuthRequest(parameters: parameters, client: AuthenticatedClient(id: claimed.id, isConfidential: true,
                                                                                              method: basic ? .secretBasic : .secretPost)))
        }
    }

    private static func invalidClient(_ description: String) -> HTTPResponse {
        error(401, "invalid_client", description, headers: [("WWW-Authenticate", "Basic realm=\"dev-issuer\"")])
    }

    /// RFC 6749 §2.3.1: id and secret are form-urlencoded, joined by `:`, then base64.
    private static func decodeBasic(_ encoded: String) -> (id: String, secret: String)? {
        guard let data = Data(base64Encoded: encoded), let text = String(data: data, encoding: .utf8),
              let colon = text.firstIndex(of: ":") else { return nil }
        guard let id = FormEncoding.decodeComponent(text[..<colon].utf8),
              let secret = FormEncoding.decodeComponent(text[text.index(after: colon)...].utf8),
              !id.isEmpty else { return nil }
        return (id, secret)
    }
}
