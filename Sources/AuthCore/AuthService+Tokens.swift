import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
import Locking

/// `sign`, `token` and `refresh` after a 401: which token a request uses now, and when one
/// must be obtained first (the freshness rule is `RefreshTiming`'s; the decisions on it are here).
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
        let routed: (accounts: ProviderAccounts, shape: TokenShape)?
        do {
            routed = try route(url: url, provider: provider)
        } catch {
            // An error is an answer too: it must not overtake an earlier login or logout of the provider named.
            if let provider, !runsNow(provider) { return nil }
            throw error
        }
        guard let (p, originShape) = routed else { return .unsigned }
        guard runsNow(p.id) else { return nil }
        let c = try resolve(p, account)
        let shape = shape ?? originShape
        guard let credential = try credentialNow(c, shape) else { return nil }
        return .signed(try signature(p, c, shape, credential, method: method, url: url))
    }

    /// `token` from memory, like `signNow`: nil when the token must be obtained first (then `token`).
    public func tokenNow(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none) throws(AuthError) -> TokenResult? {
        guard let credential = try credentialNow(try resolve(try accounts(id), account), shape) else { return nil }
        return TokenResult(credential)
    }

    /// The token of `shape` if it can be used without waiting (fresh, or stale with a
    /// background refresh started); nil when it is expired or not obtained yet.
    func credentialNow(_ c: SessionCoordinator, _ shape: TokenShape) throws(AuthError) -> Credential? {
        guard let now = c.snapshot() else { throw notLoggedIn(c) }
        let session = now.session
        if shape.isNone {
            switch timing.freshness(of: session, at: clock.now()) {
            case .fresh: break
            case .stale: refreshInBackground(c, session, .none)
            case .expired: return nil
            }
            return Credential(session, authorization: now.authorization)
        }
        guard let token = session.token(for: shape) else { return nil }
        switch timing.freshness(of: token, at: clock.now()) {
        case .fresh: break
        case .stale: refreshInBackground(c, session, shape)
        case .expired: return nil
        }
        return Credential(token, of: session)
    }

    /// `sign`, waiting for a token when one must be obtained first.
    public func sign(url: String, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                     method: String = "GET") async throws(AuthError) -> SignDecision {
        guard let (p, originShape) = try route(url: url, provider: provider) else { return .unsigned }
        let c = try resolve(p, account)
        let shape = shape ?? originShape
        return .signed(try signature(p, c, shape, try await usableCredential(c, shape), method: method, url: url))
    }

    /// A `sign` answer; a DPoP-bound token gets a fresh proof for this method and URL (never cached).
    func signature(_ p: ProviderAccounts, _ c: SessionCoordinator, _ shape: TokenShape, _ credential: Credential,
                           method: String, url: String) throws(AuthError) -> Signature {
        var proof: String?
        if let key = credential.dpopKey {
            do {
                proof = try key.proof(method: method, url: url, at: clock.now(), accessToken: credential.accessToken, nonce: nonces.nonce(for: url))
            } catch {
                throw AuthError.unavailable(c.config, error.description)
            }
        }
        return Signature(provider: p.id, account: c.account, shape: shape, credential: credential, proof: proof)
    }

    /// The access token of `shape`, obtained or refreshed first when needed.
    public func token(provider id: String, account: AccountChoice = AccountChoice(), shape: TokenShape = .none) async throws(AuthError) -> TokenResult {
        TokenResult(try await usableCredential(try resolve(try accounts(id), account), shape))
    }

    /// After a 401: refresh unless the rejected authorization is no longer one the account holds.
    public func refresh(provider id: String, account: AccountChoice = AccountChoice(), failedAuthorization: String?) async throws(AuthError) -> RefreshResult {
        let c = try resolve(try accounts(id), account)
        let shape = failedAuthorization.flatMap { failed in
            c.current?.shaped.first { $0.authorization == failed || $0.accessToken == failed }?.shape
        } ?? .none
        let (credential, refreshed) = try await credentialAfterRejection(c, shape, failedAuthorization: failedAuthorization)
        return RefreshResult(provider: id, account: c.account, refreshed: refreshed, expiresAt: credential.expiresAt)
    }

    /// The `refresh` rule, once for `refresh` and `fetch`: the token of `shape` to use
    /// after the server rejected `failedAuthorization` (nil: the current one), and
    /// whether a refresh happened. Nothing is sent when that token was already replaced.
    func credentialAfterRejection(_ c: SessionCoordinator, _ shape: TokenShape, failedAuthorization: String?) async throws(AuthError) -> (Credential, Bool) {
        guard let session = c.current else { throw notLoggedIn(c) }
        let held = shape.isNone ? Credential(session, authorization: session.authorization) : session.token(for: shape).map { Credential($0, of: session) }
        if let held, let failed = failedAuthorization, failed != held.authorization, failed != held.accessToken {
            return (held, false)
        }
        if shape.isNone, !canRefresh(c, session) {
            // The server rejected the current token and there is no way to get another.
            let current = try await expireUnlessReplaced(c, session, why: "the server no longer accepts the token")
            return (Credential(current, authorization: current.authorization), false)
        }
        let (fresh, refreshed) = try await refresh(c, stale: session, shape: shape)
        guard let credential = Self.credential(in: fresh, shape) else { return (try await usableCredential(c, shape), true) }
        return (credential, refreshed)
    }

    static func credential(in session: Session, _ shape: TokenShape) -> Credential? {
        if shape.isNone { return Credential(session, authorization: session.authorization) }
        return session.token(for: shape).map { Credential($0, of: session) }
    }

    func canRefresh(_ c: SessionCoordinator, _ session: Session) -> Bool {
        c.config.flow.descriptor.canRefresh(c.config, session)
    }

    /// The token of `shape` to use now. A stale token is used while a refresh runs in
    /// the background; an expired (or nearly expired, or missing) one is obtained
    /// first — and if that fails for any reason but a dead session or a refused shape
    /// while a token is still valid, that token is used: never an error while a valid token exists.
    func usableCredential(_ c: SessionCoordinator, _ shape: TokenShape) async throws(AuthError) -> Credential {
        // Another shape's refresh (here or in another agent) may replace the session
        // under this one's feet: then look again, a few times at most.
        for _ in 0..<4 {
            guard let session = c.current else { throw notLoggedIn(c) }
            let held = Self.credential(in: session, shape)
            if let held {
                switch timing.freshness(of: held, at: clock.now()) {
                case .fresh: return held
                case .stale:
                    refreshInBackground(c, session, shape)
                    return held
                case .expired: break
                }
            }
            if shape.isNone, !canRefresh(c, session) {
                if RefreshTiming.isValid(session, at: clock.now()) { return Credential(session, authorization: session.authorization) }  // no way to refresh: use it while it lasts
                let current = try await expireUnlessReplaced(c, session, why: "the session has expired")
                return Credential(current, authorization: current.authorization)
            }
            do {
                // Another shape's refresh may have replaced the session first (it keeps this shape's
                // old token): only a token callers need not wait for ends the loop.
                let (fresh, _) = try await refresh(c, stale: session, shape: shape)
                if let credential = Self.credential(in: fresh, shape), timing.freshness(of: credential, at: clock.now()) != .expired { return credential }
            } catch where error.code != .sessionExpired && error.code != .scopeNotGranted {
                // The server, the store or the refresh limit failed, not the session: a token that is
                // still valid (the old one, or a new one that could not be saved) is used meanwhile.
                guard let current = c.current.flatMap({ Self.credential(in: $0, shape) }), RefreshTiming.isValid(current, at: clock.now()) else { throw error }
                return current
            }
        }
        throw AuthError.unavailable(c.config, "the session kept changing while a token for \(shape) was obtained")
    }

    /// Starts a refresh of a stale token that nobody waits for. A passing failure
    /// delays the next attempt (backoff with jitter); the token stays in use.
    func refreshInBackground(_ c: SessionCoordinator, _ stale: Session, _ shape: TokenShape) {
        guard !shape.isNone || canRefresh(c, stale), !shuttingDown.current,
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
