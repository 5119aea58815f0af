import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
import Locking

/// `sign`, `token` and `refresh` after a 401: acting on the account session's decision of which
/// token a request uses now (`AccountSession.credential`, after `RefreshTiming.decision`).
extension AuthService {
    // MARK: sign / token / refresh

    /// `sign` from memory: the decision now, or nil when a token must be obtained
    /// first (then `sign`, which waits). A stale token is signed with while a
    /// refresh starts in the background. `shape` nil: the one the URL's origin is configured with.
    ///
    /// `runsNow` is asked, before anything is decided, with the provider the
    /// request is ordered by (the one named, else the one covering the URL): a
    /// caller that routed nothing yet learns it from this one lookup, and false
    /// makes the answer nil without touching the session.
    public func signNow(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                        method: String = "GET", runsNow: (String) -> Bool = { _ in true }) throws(AuthError) -> SignDecision? {
        let routed: Route?
        do {
            routed = try router.route(url: url, provider: provider)
        } catch {
            // An error is an answer too: it must not overtake an earlier login or logout of the provider named.
            if let provider, !runsNow(provider) { return nil }
            throw error
        }
        guard let routed else { return .unsigned }
        guard runsNow(routed.provider) else { return nil }
        return try signNow(routed, url: url, account: account, shape: shape, method: method).map(SignDecision.signed)
    }

    /// `signNow` of a request already routed (`sign`'s handler and `header` route once for both tries):
    /// nil when a token must be obtained first (then `sign(_:url:…)`).
    public func signNow(_ route: Route, url: String, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                        method: String = "GET") throws(AuthError) -> Signature? {
        let (p, originShape) = (route.accounts, route.shape)
        guard let c = try resolveNow(p, account) else { return nil }
        let shape = shape ?? originShape
        guard let credential = try credentialNow(c, shape) else { return nil }
        return try signature(p, c, shape, credential, method: method, url: url)
    }

    /// `token` from memory, like `signNow`: nil when the token must be obtained first (then `token`).
    public func tokenNow(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none,
                         use: TokenUse = .any) throws(AuthError) -> TokenResult? {
        let p = try accounts(id)
        try use.check(p.config)
        guard let c = try resolveNow(p, account), let credential = try credentialNow(c, shape) else { return nil }
        try use.check(p.config, credential)
        return TokenResult(credential)
    }

    /// `sign` for a caller that can wait: the answer now, else the `sign` that waits for it,
    /// routed once for both. The waiting closure is only made when needed: answering now
    /// allocates nothing more.
    public func signNowOrWait(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                              method: String = "GET") throws(AuthError) -> NowOrWait<SignDecision> {
        guard let route = try router.route(url: url, provider: provider) else { return .now(.unsigned) }
        if let now = try signNow(route, url: url, account: account, shape: shape, method: method) { return .now(.signed(now)) }
        return .wait { [self] () async throws(AuthError) in .signed(try await sign(route, url: url, account: account, shape: shape, method: method)) }
    }

    /// `token` for a caller that can wait, like `signNowOrWait`.
    public func tokenNowOrWait(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none,
                               use: TokenUse = .any) throws(AuthError) -> NowOrWait<TokenResult> {
        if let now = try tokenNow(provider: id, account: account, shape: shape, use: use) { return .now(now) }
        return .wait { [self] () async throws(AuthError) in try await token(provider: id, account: account, shape: shape, use: use) }
    }

    /// The token of `shape` if it can be used without waiting (a stale one's background
    /// refresh started); nil when one must be obtained first.
    func credentialNow(_ c: AccountSession, _ shape: TokenShape) throws(AuthError) -> Credential? {
        switch try decide(c, shape) {
        case .use(let credential), .useAndRefreshInBackground(let credential, _): return credential
        case .wait: return nil
        }
    }

    /// The account session's decision for `shape` now, with a stale token's background refresh started.
    private func decide(_ c: AccountSession, _ shape: TokenShape) throws(AuthError) -> AccountSession.CredentialNow {
        guard let decided = c.credential(shape, timing: timing, now: clock.now()) else { throw notLoggedIn(c) }
        // A derived token made from a subject session that changed since is made again first.
        if c.config.subject != nil, let held = c.snapshot(), subjectMoved(c, held.session) { return .wait(held) }
        if case .useAndRefreshInBackground(_, let stale) = decided { refreshInBackground(c, stale.session, shape) }
        return decided
    }

    /// `sign`, waiting for a token when one must be obtained first.
    public func sign(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                     method: String = "GET") async throws(AuthError) -> SignDecision {
        guard let route = try router.route(url: url, provider: provider) else { return .unsigned }
        return .signed(try await sign(route, url: url, account: account, shape: shape, method: method))
    }

    /// `sign` of a request already routed (`signNow(_:url:…)` found no token to use at once).
    public func sign(_ route: Route, url: String, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                     method: String = "GET") async throws(AuthError) -> Signature {
        let (p, originShape) = (route.accounts, route.shape)
        let c = try await resolveObtaining(p, account)
        let shape = shape ?? originShape
        return try signature(p, c, shape, try await usableCredential(c, shape), method: method, url: url)
    }

    /// The access token of `shape`, obtained or refreshed first when needed.
    public func token(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none,
                      use: TokenUse = .any) async throws(AuthError) -> TokenResult {
        let p = try accounts(id)
        try use.check(p.config)
        let credential = try await usableCredential(try await resolveObtaining(p, account), shape)
        try use.check(p.config, credential)
        return TokenResult(credential)
    }

    /// `token {minValidSeconds}` (`auth-agent token --min-valid`, like `oidc-token -t`): the token,
    /// refreshed first unless it is valid `seconds` more — and only when the session can be
    /// refreshed: a token nothing can renew is given as it is, never treated as rejected.
    /// `refreshed` says which; the server decides lifetimes, so a refreshed token may live less.
    public func token(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none, use: TokenUse = .any,
                      validFor seconds: Double) async throws(AuthError) -> TokenResult {
        let first = try await token(provider: id, account: account, shape: shape, use: use)
        guard let until = first.expiresAt, until.timeIntervalSince(clock.now()) < seconds else { return first }
        let c = try resolve(try accounts(id), account)
        guard let session = c.current, c.canRefresh(session), let (_, held) = session.credential(named: first.accessToken) else { return first }
        _ = try await credentialAfterRejection(c, shape, rejected: held.issue)
        var second = try await token(provider: id, account: account, shape: shape, use: use)
        second.refreshed = true
        return second
    }

    /// After a 401: refresh unless the rejected authorization is no longer one the account holds.
    /// Without `failedAuthorization` (`auth-agent refresh`: a new token now, nothing was rejected),
    /// a session with nothing to refresh with is kept as it is (`refreshed: false`), not ended.
    public func refresh(provider id: String, account: AccountChoice = AccountChoice(), failedAuthorization: String?) async throws(AuthError) -> RefreshResult {
        let c = try resolve(try accounts(id), account)
        guard let session = c.current else { throw notLoggedIn(c) }
        if failedAuthorization == nil, !c.canRefresh(session) {
            return RefreshResult(provider: id, account: c.account, refreshed: false, expiresAt: session.expiresAt)
        }
        var (shape, rejected) = (TokenShape.none, Credential.Issue?.none)
        if let failed = failedAuthorization {
            guard let (named, credential) = session.credential(named: failed) else {
                // Replaced already (by another request or process): the current token, nothing sent.
                return RefreshResult(provider: id, account: c.account, refreshed: false, expiresAt: session.expiresAt)
            }
            (shape, rejected) = (named, credential.issue)
        }
        let (credential, refreshed) = try await credentialAfterRejection(c, shape, rejected: rejected)
        return RefreshResult(provider: id, account: c.account, refreshed: refreshed, expiresAt: credential.expiresAt)
    }

    /// After a 401 for the request `rejected` signed (the `mcp` bridge's): refresh unless its token
    /// was replaced already.
    public func refresh(after rejected: Signature) async throws(AuthError) -> RefreshResult {
        let c = try resolve(try accounts(rejected.provider), AccountChoice(account: rejected.account))
        let (credential, refreshed) = try await credentialAfterRejection(c, rejected.shape, rejected: rejected.issue)
        return RefreshResult(provider: rejected.provider, account: c.account, refreshed: refreshed, expiresAt: credential.expiresAt)
    }

    /// The `refresh` rule, once for `refresh`, `fetch` and the `mcp` bridge: the token of `shape` to
    /// use after the server rejected the token `rejected` (nil: the current one), and whether a
    /// refresh happened. Nothing is sent when that token was already replaced.
    func credentialAfterRejection(_ c: AccountSession, _ shape: TokenShape, rejected: Credential.Issue?) async throws(AuthError) -> (Credential, Bool) {
        guard let session = c.current else { throw notLoggedIn(c) }
        let held = session.credential(shape)
        if let held, let rejected, held.issue != rejected {
            return (held, false)
        }
        try await followMove(of: c.config)
        if shape.isNone, !c.canRefresh(session) {
            // The server rejected the current token and there is no way to get another.
            let current = try await expireUnlessReplaced(c, session, why: "the server no longer accepts the token")
            return (Credential(current, authorization: current.authorization), false)
        }
        let (fresh, refreshed) = try await refresh(c, stale: session, shape: shape)
        guard let credential = fresh.credential(shape) else { return (try await usableCredential(c, shape), true) }
        return (credential, refreshed)
    }

    /// The token of `shape` to use now, obtained first when the account session's decision
    /// says to wait — and if that fails for any reason but a dead session or a refused shape
    /// while a token is still valid, that token is used: never an error while a valid token exists.
    func usableCredential(_ c: AccountSession, _ shape: TokenShape) async throws(AuthError) -> Credential {
        // Another shape's refresh (here or in another agent) may replace the session
        // under this one's feet: then look again, a few times at most.
        for _ in 0..<4 {
            let session: Session
            switch try decide(c, shape) {
            case .use(let credential), .useAndRefreshInBackground(let credential, _): return credential
            case .wait(let stale): session = stale.session
            }
            if shape.isNone, !c.canRefresh(session) {
                // Expired, and no way to get another (one still valid was used above).
                let current = try await expireUnlessReplaced(c, session, why: "the session has expired")
                return Credential(current, authorization: current.authorization)
            }
            do {
                // Another shape's refresh may have replaced the session first (it keeps this shape's
                // old token): only a token callers need not wait for ends the loop.
                let (fresh, _) = try await refresh(c, stale: session, shape: shape)
                switch c.decide(fresh.credential(shape), of: AccountSession.Snapshot(fresh), shape, timing: timing, now: clock.now()) {
                case .use(let credential), .useAndRefreshInBackground(let credential, _): return credential
                case .wait: break
                }
            } catch where error.code != .sessionExpired && error.code != .scopeNotGranted {
                // The server, the store or the refresh limit failed, not the session: a token that is
                // still valid (the old one, or a new one that could not be saved) is used meanwhile.
                guard let current = c.current?.credential(shape), RefreshTiming.isValid(current, at: clock.now()) else { throw error }
                return current
            }
        }
        throw AuthError.unavailable(c.config, "the session kept changing while a token for \(shape) was obtained")
    }

    /// Starts a refresh of a stale token that nobody waits for (the decision said it can be
    /// refreshed). A passing failure delays the next attempt (backoff with jitter); the token stays in use.
    func refreshInBackground(_ c: AccountSession, _ stale: Session, _ shape: TokenShape) {
        guard !shuttingDown.current,
              c.claimBackgroundRefresh(of: stale, shape: shape, now: clock.now()) else { return }
        Task { [self] in
            do throws(AuthError) {
                _ = try await refresh(c, stale: stale, shape: shape)
                c.backgroundRefreshEnded(shape: shape, failed: false, now: clock.now())
            } catch {
                c.backgroundRefreshEnded(shape: shape, failed: true, now: clock.now())
                // A rejected session was already ended (and announced) by the refresh itself.
                if error.code != .sessionExpired { logger.warn("background refresh of \(c.id) failed: \(error.message) The current token stays in use.") }
            }
        }
    }
}
