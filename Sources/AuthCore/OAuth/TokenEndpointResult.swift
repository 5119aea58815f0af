import JSON

/// What a token endpoint's answer means for the caller: use the tokens, give up
/// on this grant, or try again later.
///
/// The split matters for refresh: `rejected` means the refresh token is dead
/// (the user must log in again) — unless the server only refused the scopes or
/// resource asked for —, while `transient` must keep it, because a server
/// outage is no reason to log everyone out. `refreshOutcome` and `loginTokens`
/// below are the one place that says so.
public enum TokenEndpointResult: Sendable, Equatable {
    case success(TokenResponse)
    /// The server refused the grant: its OAuth `error` code (or `http_<status>`
    /// when it gave none) and its `error_description`, if any.
    case rejected(error: String, description: String?)
    /// Worth retrying: server errors, rate limiting, timeouts.
    /// The text never includes the response body.
    case transient(String)
    /// A success status whose body is not a usable token response (not JSON,
    /// duplicate keys, a token that cannot go in a header…): the server's
    /// fault, and asking again would get the same answer. The text names the
    /// problem, never a value.
    case malformed(String)

    /// Classifies a token endpoint response (RFC 6749 §5.1, §5.2):
    /// - 2xx with a JSON object holding a usable `access_token` → `success`;
    ///   2xx with an `error` member instead → `rejected` (some servers, GitHub
    ///   among them, report errors with 200); any other 2xx body → `malformed`.
    /// - 408, 429 and 5xx → `transient`.
    /// - other 4xx → `rejected`, with the body's `error` when it has one, else `http_<status>`.
    /// - anything else (1xx, 3xx) → `transient`.
    public static func classify(_ response: HTTPResponse) -> TokenEndpointResult {
        let status = response.status
        switch status {
        case 200...299:
            return success(response)
        case 408, 429, 500...599:
            return .transient("the token endpoint answered HTTP \(status)")
        case 400...499:
            if let object = (try? JSONParser.parse(response.body))?.objectValue, let rejection = oauthError(object) { return rejection }
            return .rejected(error: "http_\(status)", description: nil)
        default:
            return .transient("the token endpoint answered HTTP \(status)")
        }
    }

    /// A 2xx answer: its tokens, an OAuth error sent with a success status, or
    /// `malformed` saying what is wrong (strict JSON, as everywhere in the agent).
    private static func success(_ response: HTTPResponse) -> TokenEndpointResult {
        let answer = "the token endpoint's HTTP \(response.status) answer"
        let document: JSONValue
        do {
            document = try JSONParser.parse(response.body)
        } catch {
            return .malformed("\(answer) is not valid JSON (\(error.message))")
        }
        guard let object = document.objectValue else { return .malformed("\(answer) is \(document.kindName), not an object") }
        if object["access_token"] == nil, let rejection = oauthError(object) { return rejection }
        do {
            return .success(try TokenResponse(json: object))
        } catch {
            return .malformed("\(answer) is not a usable token response: \(error.problem)")
        }
    }

    /// The refusal in the answer; an `error_subtype` (Google's `invalid_rapt`) the description does not already name is added to it.
    private static func oauthError(_ object: JSONObject) -> TokenEndpointResult? {
        guard let error = object["error"]?.stringValue, !error.isEmpty else { return nil }
        var description = object["error_description"]?.stringValue
        if let subtype = object["error_subtype"]?.stringValue, !subtype.isEmpty, description?.contains(subtype) != true {
            description = description.map { "\($0) (\(subtype))" } ?? subtype
        }
        return .rejected(error: error, description: description)
    }
}

extension TokenResponse {
    /// The same as `TokenEndpointResult.classify(_:)`, reachable from either type.
    public static func classify(_ response: HTTPResponse) -> TokenEndpointResult {
        TokenEndpointResult.classify(response)
    }
}

// MARK: What an answer means to a login or a refresh

/// AppAuth's split, written once for every flow: an OAuth error means the grant
/// (or the session behind it) is dead; a failing server is worth trying again
/// later; an unusable answer is the server's fault and costs the session nothing.
/// Flows keep only what is particular to them (the device flow's polling codes).
extension TokenEndpointResult {
    /// The tokens a login grant got, or the error the login reports: for an OAuth
    /// error the flow's own refusal, made by `refused` from the server's words
    /// (`ServerRefusal`, made safe); `authServerUnavailable` (retryable) when
    /// the server failed; `loginDenied` naming the problem when the answer is unusable.
    func loginTokens(_ provider: ProviderConfig, refused: (ServerRefusal) -> AuthError) throws(AuthError) -> TokenResponse {
        switch self {
        case .success(let token): return token
        case .rejected(let error, let description): throw refused(ServerRefusal(error: error, description: description))
        case .transient(let why): throw AuthError.unavailable(provider, why)
        case .malformed(let why): throw AuthError.malformedResponse(provider, why)
        }
    }

    /// What a grant that renews a session came to; `renewed` makes the new session
    /// from the tokens. An OAuth error is `rejected` (the session is dead), in the
    /// server's words — except a refusal of what was asked for, which leaves the
    /// grant alive (`notGranted`).
    func refreshOutcome(_ renewed: (TokenResponse) -> Session) -> RefreshOutcome {
        switch self {
        case .success(let token): return .refreshed(renewed(token))
        case .rejected(let error, let description) where Self.shapeRefusals.contains(error):
            return .notGranted(ServerRefusal(error: error, description: description))
        case .rejected(let error, let description): return .rejected(ServerRefusal(error: error, description: description))
        case .transient(let why): return .transient(why)
        case .malformed(let why): return .malformed(why)
        }
    }

    /// The server refuses the scopes (`invalid_scope`, RFC 6749 §5.2) or the
    /// resource or audience (`invalid_target`, RFC 8707 §2) asked for, not the grant.
    static let shapeRefusals: Set<String> = ["invalid_scope", "invalid_target"]
}
