import JSON
import Wire

/// A Pushed Authorization Request (RFC 9126): the authorization request's parameters POSTed to
/// the server, with the client's authentication, before the browser opens; the browser then
/// carries only `client_id` and the `request_uri` the server answered with. Its errors are the
/// server's words (`loginDenied`, `serverDescription`); a server that is down is 1005.
struct PushedAuthorization: Sendable, Equatable {
    let requestURI: String
    /// Seconds the `request_uri` is good for; a login still waiting then pushes again.
    let expiresIn: Int

    /// What the browser opens: the authorization endpoint with `client_id` and `request_uri` only (RFC 9126 §4).
    func authorizationURL(endpoint: String, clientId: String) -> String {
        let query = String(decoding: FormEncoding.encode([("client_id", clientId), ("request_uri", requestURI)]), as: UTF8.self)
        return endpoint + (endpoint.contains("?") ? "&" : "?") + query
    }

    /// The answer of a PAR endpoint (RFC 9126 §2.2, §2.3): `201` (some servers say `200`) with
    /// `request_uri` and a positive `expires_in`, else the refusal in the server's words.
    static func read(_ response: HTTPResponse, provider: ProviderConfig) throws(AuthError) -> PushedAuthorization {
        let object = (try? JSONParser.parse(response.body))?.objectValue
        switch response.status {
        case 200, 201:
            guard let uri = object?["request_uri"]?.stringValue, !uri.isEmpty,
                  let seconds = object?["expires_in"]?.intValue, seconds > 0 else {
                throw AuthError.malformedResponse(provider, "the pushed authorization request's answer has no request_uri or no positive expires_in")
            }
            return PushedAuthorization(requestURI: uri, expiresIn: Int(min(seconds, 3600)))
        case 408, 429, 500...599:
            throw AuthError.unavailable(provider, "the pushed authorization request endpoint answered HTTP \(response.status)")
        default:
            let refusal = ServerRefusal(error: object?["error"]?.stringValue ?? "http_\(response.status)",
                                        description: object?["error_description"]?.stringValue)
            throw AuthError.loginDenied(provider, .pushRefused(refusal))
        }
    }
}

extension OAuthClient {
    /// Pushes `parameters` to `endpoint` with the client's authentication.
    func push(_ parameters: [(String, String)], to endpoint: String) async throws(AuthError) -> PushedAuthorization {
        let response: HTTPResponse
        do {
            response = try await postForm(endpoint, parameters)
        } catch {
            switch error { case .transient(let why): throw AuthError.unavailable(config, why) }
        }
        return try PushedAuthorization.read(response, provider: config)
    }
}
