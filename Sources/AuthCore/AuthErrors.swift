/// The errors about providers, accounts, origins, credentials and sessions, each worded here
/// once, grouped by code: the texts are part of the protocol's transcripts and of what the
/// command line prints, so a caller names the reason rather than writing its own sentence.
/// How a login ended (1008, 1009): `AuthErrors+Login.swift`; server, transport and store
/// errors: `AuthErrors+Server.swift`; the derived flows' steps: `AuthErrors+Exchange.swift`. Only these files call `AuthError.init`.
extension AuthError {
    // MARK: 1001 notLoggedIn

    /// Nobody is logged in to `provider` (1001); with `account`, that account is not.
    /// (When the keyring could not be read, the service says 1010 instead: `AuthService.notLoggedIn`.)
    static func notLoggedIn(_ provider: ProviderConfig, account: String? = nil) -> AuthError {
        guard let account else { return AuthError(.notLoggedIn, "Not logged in to \(provider.displayName).", provider: provider.id) }
        return AuthError(.notLoggedIn, "Account \(account) is not logged in to \(provider.displayName).", provider: provider.id)
    }

    /// The stored session of `account` of `provider` was issued by `issuedBy`, which the configuration no
    /// longer names (1001): it is not used, and kept until a login replaces it or a logout removes it.
    static func sessionOfAnotherIssuer(_ provider: ProviderConfig, account: String, issuedBy: String) -> AuthError {
        let now = provider.sessionIssuer.map { "now names \($0)" } ?? "names no issuer now"
        return AuthError(.notLoggedIn, "Account \(account) is not logged in to \(provider.displayName): the session was issued by \(issuedBy); "
                         + "the configuration \(now): log in again.", provider: provider.id)
    }

    /// `name` fits several logged-in accounts of `provider` (`matches` lists them): 1001, as no
    /// account is chosen, rather than one of them at random.
    static func ambiguousAccount(_ name: String, of provider: ProviderConfig, matches: String) -> AuthError {
        AuthError(.notLoggedIn, "\"\(name)\" names several accounts of \(provider.displayName): \(matches); name one by its id.", provider: provider.id)
    }

    /// An MCP server at `url` answered 401 and no provider covers it, nor could one be learned (1001).
    static func mcpLoginUncovered(_ url: String) -> AuthError {
        AuthError(.notLoggedIn, "The MCP server wants a login (HTTP 401) and no provider covers \(Origin(url: url)?.description ?? url)")
    }

    // MARK: 1002 unknownProvider

    /// Why a provider id names nothing a request can use (1002).
    public enum UnknownProvider: Sendable {
        /// Not among the service's providers; `known` lists them (empty: there is no
        /// configuration yet, so say how to start rather than "known: ."), nil leaves the list out.
        case notConfigured(known: [String]?)
        /// Neither configured nor learned (`forget`).
        case notKnown
        /// Not a learned provider (a step-up names one).
        case notLearned
        /// A configured provider, which `forget` does not remove.
        case configuredNotLearned
    }

    /// Provider `id` cannot be used, for the reason `why` (1002).
    public static func unknownProvider(_ id: String, _ why: UnknownProvider) -> AuthError {
        let message: String
        switch why {
        case .notConfigured(let known?) where known.isEmpty:
            message = "No provider \"\(id)\" is configured; there is no configuration yet ('auth-agent config add' adds a provider)."
        case .notConfigured(let known?):
            // A typo names what it was probably meant to be, as an unknown command or option does.
            let guess = KeySuggestion.closest(to: id, among: known).map { " Did you mean \"\($0)\"?" } ?? ""
            message = "No provider \"\(id)\" is configured; known: \(known.joined(separator: ", ")).\(guess)"
        case .notConfigured(nil): message = "No provider \"\(id)\" is configured."
        case .notKnown: message = "No provider \"\(id)\" is known."
        case .notLearned: message = "Provider \"\(id)\" is not a learned provider."
        case .configuredNotLearned: message = "Provider \"\(id)\" is configured, not learned: remove it from the configuration instead."
        }
        return AuthError(.unknownProvider, message, provider: id)
    }

    // MARK: 1003 invalidCredentials

    /// What was wrong with the credentials a login was given (1003).
    enum CredentialProblem {
        /// A password login without a username or password.
        case needsUsernameAndPassword
        /// The server refused the username or password.
        case passwordRejected
        /// The server refused the client credentials.
        case clientCredentialsRejected
        /// A token login without a token.
        case needsToken
        /// The token has characters a header value cannot carry.
        case tokenNotAHeaderValue
        /// The userinfo endpoint did not accept the token.
        case tokenNotAccepted
    }

    /// `provider` cannot log in with what it was given (1003), for the reason `why`; the server's
    /// description of its refusal (`refusal`), when it gave one, in the message and `serverDescription`.
    static func invalidCredentials(_ provider: ProviderConfig, _ why: CredentialProblem, refusal: ServerRefusal? = nil) -> AuthError {
        let name = provider.displayName
        let message: String
        switch why {
        case .needsUsernameAndPassword: message = "\(name) needs a username and a password."
        case .passwordRejected: message = "\(name) rejected the username or password\(Self.saying(refusal))."
        case .clientCredentialsRejected: message = "\(name) rejected the client credentials\(Self.saying(refusal))."
        case .needsToken: message = "\(name) needs a token."
        case .tokenNotAHeaderValue: message = "The token for \(name) contains \(AuthorizationToken.rule)."
        case .tokenNotAccepted: message = "\(name) did not accept the token."
        }
        return AuthError(.invalidCredentials, message, provider: provider.id).carrying(refusal)
    }

    /// ` (error: description)` when the server described its refusal, else nothing: a bare
    /// `invalid_grant` adds nothing to "rejected the username or password".
    static func saying(_ refusal: ServerRefusal?) -> String {
        guard let refusal, refusal.description != nil else { return "" }
        return " (\(refusal.line))"
    }

    /// A password login was asked for without a username or password (1003).
    static func needsUsernameAndPassword(_ provider: ProviderConfig) -> AuthError {
        invalidCredentials(provider, .needsUsernameAndPassword)
    }

    // MARK: 1004 sessionExpired

    /// The session of `provider` ended (its refresh token was refused, described by `refusal` when
    /// the server did): log in again (1004).
    static func sessionExpired(_ provider: ProviderConfig, refusal: ServerRefusal? = nil) -> AuthError {
        AuthError(.sessionExpired, "The \(provider.displayName) session has expired\(saying(refusal)); log in again.", provider: provider.id)
            .carrying(refusal)
    }

    // MARK: 1006 originNotAllowed

    /// A request named `provider` for a URL of `origin` that provider does not cover (1006).
    static func notCovering(_ provider: String, _ origin: Origin?) -> AuthError {
        AuthError(.originNotAllowed, "Provider \(provider) does not cover \(origin?.description ?? "that URL").", provider: provider)
    }

    /// A URL under a path learned provider `provider` covers encodes a dot, slash or backslash
    /// (`%2e`, `%2f`, `%5c`): servers disagree on whether those end a segment, so whether the
    /// token would stay under that path cannot be told, and nothing is signed or sent (1006).
    static func ambiguousPath(_ provider: String) -> AuthError {
        AuthError(.originNotAllowed, "The URL's path encodes a dot, slash or backslash (%2e, %2f or %5c) under a path provider \(provider) covers; "
                  + "the agent signs no such URL, as servers disagree on where its segments end.", provider: provider)
    }

    /// A socket agent that fetches only covered URLs was asked for `url`, which none of its providers covers (1006).
    static func uncoveredFetch(_ url: String) -> AuthError {
        AuthError(.originNotAllowed, "No provider served here covers \(Origin(url: url)?.description ?? url); "
                  + "this socket fetches only URLs its providers cover.")
    }

    // MARK: 1015 notAllowed

    /// `method` is not for this connection (1015): on a forward socket, what would change this
    /// machine's sessions or providers, or make it learn an API, is refused before anything is sent.
    static func notAllowed(_ method: String) -> AuthError {
        AuthError(.notAllowed, "'\(method)' is not allowed on this socket: a forward socket may use its providers' sessions, not change them or learn APIs.")
    }

    /// A token to be sent without a proof (`TokenUse.bearer`) of a provider whose tokens are DPoP-bound (1015).
    static func boundToken(_ provider: ProviderConfig) -> AuthError {
        AuthError(.notAllowed, "\(provider.id) uses DPoP: its tokens are bound to a key that never leaves the agent and are useless without a proof "
                  + "for each request; use `auth-agent header URL -X METHOD`, `auth-agent fetch` or the sign method instead", provider: provider.id)
    }

    /// A forward socket's `completeLogin` named a login another door started (1015).
    static func notYourLogin() -> AuthError {
        AuthError(.notAllowed, "'completeLogin' on a forward socket completes only logins started on that socket.")
    }
}
