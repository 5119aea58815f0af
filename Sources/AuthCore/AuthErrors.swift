/// The errors every part of the agent gives about providers, accounts, origins and logins, each
/// worded here once: the texts are part of the protocol's transcripts and of what the
/// command line prints, so a caller picks the case that fits rather than writing its own.
extension AuthError {
    /// Why a provider id names nothing a request can use (1002).
    public enum UnknownProvider: Sendable {
        /// Not among the service's providers; `known` lists them (empty: there is no
        /// configuration yet, so say how to start rather than "known: ."), nil leaves the list out.
        case notConfigured(known: [String]?)
        /// Neither configured nor learned (`forget`).
        case notKnown
        /// Not among the providers of the socket agent at `socket`.
        case notServed(socket: String)
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
        case .notConfigured(let known?): message = "No provider \"\(id)\" is configured; known: \(known.joined(separator: ", "))."
        case .notConfigured(nil): message = "No provider \"\(id)\" is configured."
        case .notKnown: message = "No provider \"\(id)\" is known."
        case .notServed(let socket): message = "No provider \"\(id)\" is served by the agent at \(socket)."
        case .notLearned: message = "Provider \"\(id)\" is not a learned provider."
        case .configuredNotLearned: message = "Provider \"\(id)\" is configured, not learned: remove it from the configuration instead."
        }
        return AuthError(.unknownProvider, message, provider: id)
    }

    /// Nobody is logged in to `provider` (1001); with `account`, that account is not.
    /// (When the keyring could not be read, the service says 1010 instead: `AuthService.notLoggedIn`.)
    static func notLoggedIn(_ provider: ProviderConfig, account: String? = nil) -> AuthError {
        guard let account else { return AuthError(.notLoggedIn, "Not logged in to \(provider.displayName).", provider: provider.id) }
        return AuthError(.notLoggedIn, "Account \(account) is not logged in to \(provider.displayName).", provider: provider.id)
    }

    /// `name` fits several logged-in accounts of `provider` (`matches` lists them): 1001, as no
    /// account is chosen, rather than one of them at random.
    static func ambiguousAccount(_ name: String, of provider: ProviderConfig, matches: String) -> AuthError {
        AuthError(.notLoggedIn, "\"\(name)\" names several accounts of \(provider.displayName): \(matches); name one by its id.", provider: provider.id)
    }

    /// The login was cancelled (the person, the host, or the task waiting for it): 1008.
    /// Nil when no provider was chosen yet (learning an API).
    static func loginCancelled(_ provider: ProviderConfig?) -> AuthError {
        guard let provider else { return AuthError(.loginDenied, "The login was cancelled.") }
        return AuthError(.loginDenied, "The \(provider.displayName) login was cancelled.", provider: provider.id)
    }

    /// A password login was asked for without a username or password (1003).
    static func needsUsernameAndPassword(_ provider: ProviderConfig) -> AuthError {
        AuthError(.invalidCredentials, "\(provider.displayName) needs a username and a password.", provider: provider.id)
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

    /// A request named `provider` for a URL of `origin` that provider does not cover (1006).
    static func notCovering(_ provider: String, _ origin: Origin?) -> AuthError {
        AuthError(.originNotAllowed, "Provider \(provider) does not cover \(origin?.description ?? "that URL").", provider: provider)
    }
}
