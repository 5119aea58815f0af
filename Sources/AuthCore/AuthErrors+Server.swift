/// The errors of servers, transport and the session store — unavailable, refused scopes,
/// failed and oversized requests, a store or keyring that cannot be used, a failed
/// discovery — each worded here once, grouped by code (login errors: `AuthErrors.swift`).
extension AuthError {
    // MARK: 1005 authServerUnavailable

    /// The auth server of `provider` could not be reached or failed; retryable (1005).
    /// Without `why`, the failure is one the agent cannot name.
    static func unavailable(_ provider: ProviderConfig, _ why: String? = nil) -> AuthError {
        guard let why else { return AuthError(.authServerUnavailable, "\(provider.displayName) is unavailable.", provider: provider.id) }
        return AuthError(.authServerUnavailable, "\(provider.displayName) is unavailable: \(why).", provider: provider.id)
    }

    /// `provider` logs in through a session API but names no login endpoint (1005).
    static func noLoginEndpoint(_ provider: ProviderConfig) -> AuthError {
        AuthError(.authServerUnavailable, "\(provider.displayName) has no login endpoint.", provider: provider.id)
    }

    /// Another agent process held the store lock of `provider` past the wait: retry (1005).
    static func anotherAgentBusy(_ provider: ProviderConfig) -> AuthError {
        AuthError(.authServerUnavailable, "Another auth-agent is busy with \(provider.displayName); try again.", provider: provider.id)
    }

    /// The command line's interactive-login lock of `provider` could not be taken (`error`): 1005.
    public static func loginLockUnavailable(_ provider: String, _ error: Error) -> AuthError {
        AuthError(.authServerUnavailable, "cannot lock the store for the login: \(error)", provider: provider)
    }

    /// Another login to `name` (a provider, or a learning) still waited for its person after `AuthService.loginWait` (1005).
    static func loginStillInProgress(_ name: String) -> AuthError {
        AuthError(.authServerUnavailable, "another login to \(name) is still in progress", provider: name)
    }

    /// Why the endpoints of an issuer could not be discovered (1005).
    enum DiscoveryProblem {
        /// The document at `url` names another issuer (`named`, nil when none).
        case otherIssuer(url: String, named: String?)
        /// No document could be used; `problem` is the last one's.
        case noDocument(String)
    }

    /// The discovery document of `issuer` could not be used, for the reason `why` (1005).
    static func endpointsNotDiscovered(_ issuer: String, _ why: DiscoveryProblem) -> AuthError {
        switch why {
        case .otherIssuer(let url, let named):
            // The configured issuer is not the one the server says it is: a configuration mistake, named with both.
            return configurationInvalid("issuer", "The discovery document at \(url) names the issuer \(named ?? "(none)"), not the configured \(issuer)"
                + (named.map { "; if that server is the one meant, set \"issuer\" to \($0) exactly" } ?? "") + ".")
        case .noDocument(let problem): return AuthError(.authServerUnavailable, "Cannot discover the endpoints of \(issuer): \(problem).")
        }
    }

    /// The metadata of the configured `issuer` could not be used (`failure`, from `Discovery`): 1005.
    static func endpointsNotDiscovered(_ issuer: String, _ failure: MetadataFailure) -> AuthError {
        switch failure {
        case .notFound(let problem): return endpointsNotDiscovered(issuer, .noDocument(problem))
        case .refused(.otherIssuer(let url, let named, _)): return endpointsNotDiscovered(issuer, .otherIssuer(url: url, named: named))
        case .refused(let refusal): return endpointsNotDiscovered(issuer, .noDocument(sentence(refusal)))
        }
    }

    /// This error, about `provider`: a provider-less error (discovery's) told for the provider that
    /// asked. Code, message and the key to fix stay; `step` does not, as no learning step failed.
    func about(_ provider: String) -> AuthError {
        var error = AuthError(code, message, provider: provider)
        error.configKey = configKey
        return error
    }

    /// An error already worded elsewhere — by the agent process that answered (its code,
    /// message and provider read back from the protocol), or by a command-line login run on
    /// a thread — carried on as it was: relaying words nothing, so it takes any code.
    public static func relayed(_ code: AuthErrorCode, _ message: String, provider: String? = nil, configKey: String? = nil) -> AuthError {
        var error = AuthError(code, message, provider: provider)
        error.configKey = configKey
        return error
    }

    // MARK: 1007 excessiveRefresh

    /// `account` of `provider` was refreshed more often than `RefreshLimit` allows (1007).
    static func excessiveRefresh(_ provider: ProviderConfig, account: String, _ exceeded: RefreshLimit.Exceeded) -> AuthError {
        AuthError(.excessiveRefresh, exceeded.message(provider.displayName, account: account), provider: provider.id)
    }

    // MARK: 1010 storeUnavailable

    /// The session store of `provider` cannot be used; `problem` says why and names the path.
    static func storeUnavailable(_ provider: ProviderConfig, _ problem: Error) -> AuthError {
        let detail: String
        switch problem as? SessionStoreError {
        case .io(let message)?: detail = message
        default: detail = "\(problem)"
        }
        return AuthError(.storeUnavailable, "The session store cannot be used for \(provider.displayName): \(detail).", provider: provider.id)
    }

    /// The keyring holding the session of `provider` could not be read (`why`): 1010.
    static func keyringUnavailable(_ provider: ProviderConfig, _ why: String) -> AuthError {
        AuthError(.storeUnavailable, "The keyring holding the \(provider.displayName) session is unavailable: \(why).", provider: provider.id)
    }

    /// What learning could not keep in the session store (1010): nothing is learned from it.
    enum LearnedRecord {
        /// The client registration at an authorization server's `issuer`.
        case registration(issuer: String)
        /// The store lock of the learned record.
        case lock
        /// The learned record itself.
        case record
    }

    /// The session store refused to keep part of what was learned (1010); `problem` says why.
    static func learnedNotKept(_ what: LearnedRecord, _ problem: Error) -> AuthError {
        switch what {
        case .registration(let issuer):
            return AuthError(.storeUnavailable, "The registration at \(issuer) cannot be kept in the session store: \(problem).")
        case .lock: return AuthError(.storeUnavailable, "The session store cannot be locked to keep what was learned: \(problem).")
        case .record: return AuthError(.storeUnavailable, "What was learned cannot be kept in the session store: \(problem).")
        }
    }

    // MARK: 1011 requestFailed

    /// Why a request of `fetch` or the MCP bridge did not get an answer (1011).
    enum RequestFailure {
        /// It could not be sent (its URL or headers); `why` says what.
        case cannotBeSent(String)
        /// Its DPoP proof could not be made; `why` says why.
        case notSent(String)
        /// The transport failed; `why` is `HTTPCalls.describe`'s.
        case notCompleted(String)
        /// The MCP bridge's request failed in transport; `why` is `HTTPCalls.describe`'s.
        case mcpNotCompleted(String)
        /// It was redirected more than `FetchRequest.maxRedirects` times.
        case tooManyRedirects
        /// The HTTP+SSE transport (MCP 2024-11-05) gave no place to POST messages to; `why` says what it gave.
        case mcpNoEndpoint(String)
        /// The HTTP+SSE transport's `endpoint` event named `endpoint`, off the origin of `url`: nothing is sent there.
        case mcpEndpointElsewhere(endpoint: String, url: String)
    }

    /// A request failed for the reason `why`; retryable (1011).
    static func requestFailed(_ why: RequestFailure) -> AuthError {
        switch why {
        case .cannotBeSent(let why): return AuthError(.requestFailed, "The request cannot be sent: \(why).")
        case .notSent(let why): return AuthError(.requestFailed, "The request was not sent: \(why).")
        case .notCompleted(let why): return AuthError(.requestFailed, "The request was not completed: \(why).")
        case .mcpNotCompleted(let why): return AuthError(.requestFailed, "The MCP request was not completed: \(why).")
        case .tooManyRedirects: return AuthError(.requestFailed, "The request was redirected more than \(FetchRequest.maxRedirects) times.")
        case .mcpNoEndpoint(let why):
            return AuthError(.requestFailed, "The MCP server's HTTP+SSE stream gave no endpoint to post messages to: \(why).")
        case .mcpEndpointElsewhere(let endpoint, let url):
            let origin = Origin(url: url)?.description ?? url
            return AuthError(.requestFailed, "The MCP server's HTTP+SSE stream named \(ServerRefusal.safe(endpoint, limit: 200)) to post messages to, which is not on "
                             + "\(origin): refused, the agent's tokens go to \(origin) only.")
        }
    }

    // MARK: 1012 responseTooLarge

    /// Which part of a response passed its limit (1012).
    enum OversizedPart {
        /// The body, over the request's `maxResponseBytes`.
        case body(limit: Int)
        /// The head, over the transport's header limit.
        case headers(limit: Int)
    }

    /// A response was larger than the agent takes (1012).
    static func responseTooLarge(_ part: OversizedPart) -> AuthError {
        switch part {
        case .body(let limit): return AuthError(.responseTooLarge, "The response is larger than \(limit) bytes.")
        case .headers(let limit): return AuthError(.responseTooLarge, "The response headers are larger than \(limit) bytes.")
        }
    }

    // MARK: 1013 scopeNotGranted

    /// The server refused the scopes, audience or resource a request asked for
    /// (`invalid_scope`, `invalid_target`); `why` is its error and description as
    /// one sanitised line. Not retryable (the same request gets the same answer),
    /// and the account stays logged in.
    static func scopeNotGranted(_ provider: ProviderConfig, _ shape: TokenShape = .none, _ why: String) -> AuthError {
        let what = shape.isNone ? "the requested scopes, audience or resource" : "a token for \(shape)"
        return AuthError(.scopeNotGranted, "\(provider.displayName) did not grant \(what) (\(why)).", provider: provider.id)
    }

    /// `scopeNotGranted` for a refusal in the server's words (`invalid_scope`, `invalid_target`),
    /// its description also in `serverDescription`.
    static func scopeNotGranted(_ provider: ProviderConfig, _ shape: TokenShape, refused: ServerRefusal) -> AuthError {
        scopeNotGranted(provider, shape, refused.line).carrying(refused)
    }

    /// An MCP server asked for `scopes` (403 `insufficient_scope`) that no login could get (1013).
    static func mcpScopeNotGranted(_ scopes: [String]) -> AuthError {
        AuthError(.scopeNotGranted, "The MCP server wants the scope \(scopes.joined(separator: " ")) (HTTP 403 insufficient_scope), "
                  + "which the login cannot ask for or was not granted")
    }

    // MARK: 1014 discoveryFailed

    /// 1014 at `registration`: `issuer` answered the registration with HTTP `status`, and said why when `refusal` is there.
    static func registrationRefused(issuer: String, status: Int, _ refusal: ServerRefusal?) -> AuthError {
        let why = refusal.map { " (\($0.line))" } ?? ""
        return discoveryFailed(.registration, "\(issuer) refused the registration with HTTP \(status)\(why).").carrying(refusal)
    }

    /// 1014 at `step`: discovery refused a metadata URL or document (`refusal`, from `Discovery`).
    static func discoveryRefused(_ step: LearningStep, _ refusal: MetadataRefusal) -> AuthError {
        discoveryFailed(step, sentence(refusal) + ".")
    }

    /// 1014 at `serverMetadata`: the metadata of `issuer` names a `key` endpoint discovery refuses (`refusal`).
    static func endpointRefused(_ key: String, of issuer: String, _ refusal: MetadataRefusal) -> AuthError {
        if case .insecure(let url) = refusal {
            return discoveryFailed(.serverMetadata, "The \(key) of \(issuer) (\(url)) is not https (plain http is allowed on loopback only).")
        }
        return discoveryFailed(.serverMetadata, "The \(key) of \(issuer): \(sentence(refusal)).")
    }

    /// What `refusal` says, without a final period; worded once for 1005 and 1014.
    private static func sentence(_ refusal: MetadataRefusal) -> String {
        switch refusal {
        case .insecure(let url): return "\(url) is not https (plain http is allowed on loopback only)"
        case .localAddress(let url): return "\(url) is on a loopback or link-local address, and the API being learned is not: not requested"
        case .tooLarge(let url): return "The document at \(url) is larger than 256 KiB"
        case .redirectElsewhere(let url, let other): return "\(url) redirects to another origin (\(other)); not followed"
        case .tooManyRedirects(let url): return "\(url) redirects too many times"
        case .otherIssuer(let url, let named, let expected): return "The metadata at \(url) names the issuer \(named ?? "(none)"), not \(expected)"
        }
    }

    /// 1014: learning stopped at `step`; nothing from the attempt is kept.
    static func discoveryFailed(_ step: LearningStep, _ message: String) -> AuthError {
        var e = AuthError(.discoveryFailed, message)
        e.step = step.rawValue
        return e
    }
}
