/// How a login ended without a session — denied, refused, cancelled, timed out — worded
/// here once (1008, 1009), as the transcripts and the command line show these texts.
extension AuthError {
    // MARK: 1008 loginDenied

    /// Why the server, the person or the agent refused a login of a provider (1008).
    enum LoginRefusal {
        /// The person or server denied it, in the server's words when it said any (the redirect's or the token endpoint's).
        case denied(ServerRefusal?)
        /// The redirect came back without an authorization code.
        case noAuthorizationCode
        /// The token endpoint refused the authorization code, in these words.
        case codeRefused(ServerRefusal)
        /// The token endpoint refused the device login, in these words.
        case deviceLoginRefused(ServerRefusal)
        /// The device authorization endpoint refused to start, in these words.
        case deviceLoginNotStarted(ServerRefusal)
        /// The pushed authorization request endpoint refused the login's parameters, in these words (RFC 9126 §2.3).
        case pushRefused(ServerRefusal)
        /// The agent refused what the login brought back or would open; `problem` says what.
        case refused(String)
        /// The browser URL, naming `what` it was, cannot be opened safely (`problem`).
        case unsafeURL(what: String, problem: String)
        /// The provider has no login of the flow asked for.
        case noSuchFlow(Flow)
        /// The authorization endpoint answers the login's request with an error page, not a
        /// redirect (`why` says how), even for a client registered just now: no browser is sent there.
        case authorizationRequestRefused(String)
    }

    /// The login of `provider` was refused, for the reason `why` (1008); a server's refusal
    /// carries its words in the message and its description in `serverDescription`.
    static func loginDenied(_ provider: ProviderConfig, _ why: LoginRefusal) -> AuthError {
        let name = provider.displayName
        let message: String
        var refusal: ServerRefusal?
        switch why {
        case .denied(nil): message = "The \(name) login was denied."
        case .denied(let server?): (message, refusal) = ("The \(name) login was denied (\(server.line)).", server)
        case .noAuthorizationCode: message = "The \(name) login returned no authorization code."
        case .codeRefused(let server): (message, refusal) = ("\(name) refused the authorization code (\(server.line)).", server)
        case .deviceLoginRefused(let server): (message, refusal) = ("\(name) refused the device login (\(server.line)).", server)
        case .deviceLoginNotStarted(let server): (message, refusal) = ("\(name) refused to start a device login (\(server.line)).", server)
        case .pushRefused(let server): (message, refusal) = ("\(name) refused the pushed authorization request (\(server.line)).", server)
        case .refused(let problem): message = "The \(name) login was refused: \(problem)."
        case .unsafeURL(let what, let problem): message = "The \(name) login was refused: the \(what) cannot be opened safely (\(problem))."
        case .noSuchFlow(let flow): message = "\(name) has no \(flow.rawValue) login; its flows: \(provider.flowNames)."
        case .authorizationRequestRefused(let why):
            message = "The \(name) login cannot work: \(why), even for the client registered just now; no browser was opened."
        }
        if provider.learned == nil, let refusal, let (key, advice) = misconfigured(provider, refusedWith: refusal.error) {
            return configurationInvalid(key, message + " " + advice, provider: provider.id).carrying(refusal)
        }
        return AuthError(.loginDenied, message, provider: provider.id).carrying(refusal)
    }

    /// The configuration key a configured provider's refusal `error` points at, with what to check;
    /// nil for a refusal no configuration change fixes. (A learned provider's client is the agent's
    /// own registration: `invalid_client` there means the server forgot it, `ForgottenClients`.)
    static func misconfigured(_ provider: ProviderConfig, refusedWith error: String?) -> (key: String, advice: String)? {
        switch error {
        case "invalid_client"?:
            let authentication = provider.clientAuth != nil ? " and \"clientAuth\"" : provider.clientSecret != nil ? " and the client secret" : ""
            return ("clientId", "The server does not know this client or its authentication: check \"clientId\"\(authentication) in the configuration.")
        case "unauthorized_client"?:
            return ("flow", "This client may not use this grant there: check \"flow\" in the configuration, or the client's registration at the server.")
        default: return nil
        }
    }

    /// The authorization response of `provider`'s login did not name its issuer as RFC 9207
    /// requires (`problem` says how): 1008 — for a learned provider 1014 at step `login`, as
    /// learning reports every refusal of the server it learned (and nothing is learned).
    static func issuerMismatch(_ provider: ProviderConfig, _ problem: String) -> AuthError {
        let message = "The \(provider.displayName) login was refused: \(problem) (RFC 9207)."
        guard provider.learned == nil else { return discoveryFailed(.login, message) }
        return AuthError(.loginDenied, message, provider: provider.id)
    }

    /// The login was cancelled (the person, the host, or the task waiting for it): 1008.
    /// Nil when no provider was chosen yet (learning an API).
    public static func loginCancelled(_ provider: ProviderConfig?) -> AuthError {
        guard let provider else { return AuthError(.loginDenied, "The login was cancelled.") }
        return AuthError(.loginDenied, "The \(provider.displayName) login was cancelled.", provider: provider.id)
    }

    /// The server's answer to a login or refresh could not be used, and asking
    /// again would get the same answer: not retryable, and the message names the problem (1008).
    static func malformedResponse(_ provider: ProviderConfig, _ problem: String) -> AuthError {
        AuthError(.loginDenied, "\(provider.displayName) sent an unusable answer: \(problem).", provider: provider.id)
    }

    /// A configured `issuer` that cannot be used (`problem`), found before any login (1016, key `issuer`).
    static func issuerUnusable(_ issuer: String, _ problem: String) -> AuthError {
        configurationInvalid("issuer", "The issuer \(issuer) cannot be used: \(problem).")
    }

    // MARK: 1016 configurationInvalid

    /// What the server answered shows the configuration's `key` is wrong (`message` says how):
    /// not retryable, and no login can help; the command line exits 2 naming the key.
    static func configurationInvalid(_ key: String, _ message: String, provider: String? = nil) -> AuthError {
        var error = AuthError(.configurationInvalid, message, provider: provider)
        error.configKey = key
        return error
    }

    /// A login the command line runs for a host failed with something that is not an
    /// `AuthError` (1008); `error` says what.
    public static func loginFailed(_ error: Error) -> AuthError {
        AuthError(.loginDenied, "The login failed: \(error)")
    }

    /// No thread could be started for a command-line login (of `provider`, when one was named): 1008.
    public static func noLoginThread(provider: String? = nil) -> AuthError {
        AuthError(.loginDenied, "no thread for the login", provider: provider)
    }

    // MARK: 1009 loginTimedOut

    /// What a login waited for that did not come in time (1009).
    enum LoginWait {
        /// The browser's redirect back to the agent.
        case browserRedirect
        /// The person's approval of a device code.
        case deviceApproval
    }

    /// The login of `provider` waited for `what` past its deadline (1009).
    static func loginTimedOut(_ provider: ProviderConfig, _ what: LoginWait) -> AuthError {
        switch what {
        case .browserRedirect:
            return AuthError(.loginTimedOut, "The \(provider.displayName) login did not come back from the browser in time.", provider: provider.id)
        case .deviceApproval:
            return AuthError(.loginTimedOut, "The \(provider.displayName) login was not approved in time.", provider: provider.id)
        }
    }
}
