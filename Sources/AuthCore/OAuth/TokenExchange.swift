import JSON

/// The requests of the derived flows and what their answers must be, as pure functions: RFC 8693 token
/// exchange, the ID-JAG exchange and the jwt-bearer grant of draft-ietf-oauth-identity-assertion-authz-grant.
enum TokenExchange {
    static let grantType = "urn:ietf:params:oauth:grant-type:token-exchange"
    static let jwtBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    static let idJagType = "urn:ietf:params:oauth:token-type:id-jag"

    /// A presented token and its type.
    struct Presented: Sendable {
        let token: String
        let type: SubjectTokenType
    }

    /// RFC 8693 §2.1: the subject (and actor) tokens with their types, what is asked for, the scopes.
    static func exchangePairs(subject: Presented, actor: Presented?, requestedTokenType: String?, audience: String?, resource: String?,
                              scopes: [String]) -> [(String, String)] {
        var pairs = [("grant_type", grantType), ("subject_token", subject.token), ("subject_token_type", subject.type.urn)]
        if let actor { pairs += [("actor_token", actor.token), ("actor_token_type", actor.type.urn)] }
        if let requestedTokenType { pairs.append(("requested_token_type", requestedTokenType)) }
        if let audience { pairs.append(("audience", audience)) }
        if let resource { pairs.append(("resource", resource)) }
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: " "))) }
        return pairs
    }

    /// The ID-JAG request (§4.3): the IdP's ID token for an ID-JAG whose audience is the authorization server.
    static func idJagPairs(idToken: String, authorizationServer: String, resource: String?, scopes: [String]) -> [(String, String)] {
        exchangePairs(subject: Presented(token: idToken, type: .idToken), actor: nil, requestedTokenType: idJagType,
                      audience: authorizationServer, resource: resource, scopes: scopes)
    }

    /// The jwt-bearer grant (RFC 7523 §2.1) with the ID-JAG as its assertion (§4.4).
    static func jwtBearerPairs(assertion: String, resource: String?, scopes: [String]) -> [(String, String)] {
        var pairs = [("grant_type", jwtBearer), ("assertion", assertion)]
        if let resource { pairs.append(("resource", resource)) }
        if !scopes.isEmpty { pairs.append(("scope", scopes.joined(separator: " "))) }
        return pairs
    }

    /// The ID-JAG in an exchange's answer: the token response's `access_token` when `issued_token_type`
    /// says it is one (§4.3.2: `token_type` is `N_A`); anything else is a refusal, or an answer that is not one.
    enum IDJAGAnswer: Equatable {
        case issued(String)
        case result(TokenEndpointResult)
        case notAnIDJAG(String)
    }

    static func idJag(from response: HTTPResponse) -> IDJAGAnswer {
        let result = TokenEndpointResult.classify(response)
        guard case .success(let token) = result else { return .result(result) }
        let issued = (try? JSONParser.parse(response.body))?.objectValue?["issued_token_type"]?.stringValue
        guard issued == idJagType else {
            return .notAnIDJAG("the answer's issued_token_type is \(issued.map { "\"\(ServerRefusal.safe($0, limit: 80))\"" } ?? "missing"), not \(idJagType)")
        }
        return .issued(token.accessToken)
    }
}
