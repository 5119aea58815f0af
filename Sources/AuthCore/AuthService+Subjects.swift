#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// The derived flows (`tokenExchange`, `idJag`) among the providers: a derived provider's token is made of its
/// subject's session (`ProviderConfig.subject`), obtained when a request asks for it (no login of its own),
/// made again when the subject's session changed, and its session ends when the subject's does.
extension AuthService {
    /// The subject's token of `type` for `provider`'s exchange. An access token is refreshed first when stale, as
    /// `token` would; an ID token that has expired refreshes the subject's session first (a login of it, when the
    /// derived provider is being logged in with `context`, if it cannot be refreshed).
    func subjectToken(for provider: ProviderConfig, _ type: SubjectTokenType, from id: String, login context: LoginContext?) async throws(AuthError) -> SubjectToken {
        let p = try accounts(id)
        if let context, (try? resolve(p, AccountChoice())) == nil {
            _ = try await login(p, flow: nil, credentials: nil, context: context)
        }
        let c = try resolve(p, AccountChoice())
        var token: String?
        switch type {
        case .accessToken:
            // Sent without a proof: a DPoP-bound token may not leave for it (`TokenUse`), as for `auth-agent token`.
            try TokenUse.bearer.check(p.config)
            let credential = try await usableCredential(c, .none)
            try TokenUse.bearer.check(p.config, credential)
            token = credential.accessToken
        case .refreshToken:
            token = c.current?.refreshToken
        case .idToken:
            guard let session = c.current else { throw notLoggedIn(c) }
            if !Self.idTokenIsValid(session.idToken, at: clock.now()) {
                if c.canRefresh(session) {
                    _ = try await refresh(c, stale: session)
                } else if let context {
                    _ = try await login(p, flow: nil, credentials: nil, context: context)
                }
            }
            token = c.current?.idToken.flatMap { Self.idTokenIsValid($0, at: clock.now(), margin: 0) ? $0 : nil }
        }
        guard let token, let session = c.current else { throw AuthError.subjectTokenMissing(p.config, type, for: provider) }
        return SubjectToken(presented: TokenExchange.Presented(token: token, type: type), user: session.user, generation: session.generation)
    }

    /// Whether an ID token's `exp` is more than `margin` seconds ahead: the subject is refreshed first when it is
    /// not ten seconds ahead (time for the exchange itself), and a token is presented only while unexpired.
    static func idTokenIsValid(_ idToken: String?, at now: Date, margin: Double = 10) -> Bool {
        guard let idToken else { return false }
        guard let expiry = JWT.expiry(of: idToken) else { return true }  // the server did not say: let it judge
        return expiry.timeIntervalSince(now) > margin
    }

    /// The subject provider's OAuth client (its server, its client authentication), as its own flows talk to it.
    func subjectClient(_ id: String) throws(AuthError) -> OAuthClient {
        let config = try accounts(id).config
        return OAuthClient(config: config, http: http, clock: clock, discovery: discovery, lifetimeWarning: WarnOnce { [logger] in logger.warn($0) },
                           nonces: nonces)
    }

    /// The account a request to a derived provider uses, or nil when none holds a token yet (the caller that can
    /// wait obtains one: `resolveObtaining`). Any other provider's answer is `resolve`'s.
    func resolveNow(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> AccountSession? {
        do {
            return try resolve(p, choice)
        } catch where p.config.subject != nil && error.code == .notLoggedIn && error.provider == p.id {
            return nil
        }
    }

    /// `resolve`, with a derived provider's first token obtained now, no person involved: one for all the user's
    /// processes, as logins are (`oneLogin`).
    func resolveObtaining(_ p: ProviderAccounts, _ choice: AccountChoice) async throws(AuthError) -> AccountSession {
        if let c = try resolveNow(p, choice) { return c }
        var quiet = LoginContext()
        quiet.logsInSubject = false
        _ = try await login(p, flow: nil, credentials: nil, context: quiet)
        return try resolve(p, choice)
    }

    /// Whether a derived session's token was made from a subject session that is no longer the subject's current one.
    func subjectMoved(_ c: AccountSession, _ session: Session) -> Bool {
        guard let from = c.config.subject?.from, let made = session.subjectGeneration,
              let subject = providers[from]?.defaultSession?.current else { return false }
        return subject.generation != made
    }

    /// After an event: when a subject's account was logged out (for whatever reason, here or by another process),
    /// the same account of every provider derived from it ends too, `subjectLoggedOut`, its token revoked.
    func subjectLoggedOut(_ id: String, account: String) {
        let providers = providers
        for derivedID in order {
            guard let p = providers[derivedID], p.config.subject?.from == id else { continue }
            for c in p.loggedIn where c.account == account {
                guard let session = c.current, c.clear(ifStill: session) else { continue }
                sync.persist(c, nil)
                try? sync.updateIndex(p) { $0.remove(c.account) }
                logger.info("logged out of \(derivedID) (\(c.account)): \(id) was logged out")
                events(.loggedOut(provider: derivedID, account: c.account, reason: .subjectLoggedOut))
                let renewer = p.renewer(of: session)
                Task { _ = await renewer.revoke(session) }
            }
        }
    }
}

extension SubjectTokens {
    /// Told every event the service sends.
    func after(_ event: AuthEvent) {
        guard case .loggedOut(let provider, let account, _) = event else { return }
        service?.subjectLoggedOut(provider, account: account)
    }
}
