#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
import Locking

/// Refreshing: one refresh in flight per account and shape, serialised with every other agent
/// process under the provider's store lock, merged into the session, or the session ended.
extension AuthService {
    /// Shutdown: no refresh starts from now on, and refreshes already under way
    /// are waited for — at most `httpTimeout` and a little for the write — so that a
    /// refresh token the server already rotated is persisted before the process exits.
    /// Blocks the calling thread (`ThreadWait`: the process exits when this returns);
    /// returns false when it gave up waiting.
    @discardableResult
    public func finishRefreshes() -> Bool {
        shuttingDown.withLock { $0 = true }
        let providers = providers
        let tasks = order.flatMap { providers[$0]?.all.flatMap(\.refreshesInFlight) ?? [] }
        guard !tasks.isEmpty else { return true }
        let finished = Locked(false)
        let done = ThreadWait()
        Task {
            for task in tasks { _ = try? await task.value }
            finished.withLock { $0 = true }
            done.wake()
        }
        return done.wait(timeout: httpTimeout + 2) { finished.current ? true : nil } != nil
    }

    /// Single-flight refresh of `stale`'s token of `shape`; returns the session to
    /// use and whether a refresh happened.
    func refresh(_ c: AccountSession, stale: Session, shape: TokenShape = .none) async throws(AuthError) -> (Session, Bool) {
        let start = c.beginRefresh(of: stale, shape: shape, mayStart: !shuttingDown.current) { [self] () async throws -> Session in
            try await performRefresh(c, stale: stale, shape: shape)
        }
        let task: Task<Session, Error>
        switch start {
        case .alreadyFresh(let current): return (current, false)
        case .loggedOut: throw notLoggedIn(c)
        case .refused: throw AuthError.unavailable(c.config, "auth-agent is shutting down")
        case .joined(let t), .started(let t): task = t
        }
        do {
            return (try await task.value, true)
        } catch let e as AuthError {
            throw e
        } catch {
            throw AuthError.unavailable(c.config)
        }
    }

    /// One refresh, serialised with every other agent process on the same store:
    /// under the provider's lock, re-read the store first — if another agent
    /// already refreshed (or logged out), use that and send nothing. A token of
    /// another shape comes from the same refresh token; a rotation it brings
    /// replaces the refresh token for every shape, in one new generation.
    func performRefresh(_ c: AccountSession, stale: Session, shape: TokenShape) async throws -> Session {
        let id = c.id
        let held = try await sync.lock(c.config)
        defer { held.unlock() }
        guard let current = try sync.adopt(c) else { throw notLoggedIn(c) }
        if !current.isSameIssue(as: stale) { return current }
        // A refresh that got the lock after shutdown began has sent nothing yet: it must not start now.
        guard !shuttingDown.current else { throw AuthError.unavailable(c.config, "auth-agent is shutting down") }
        guard let p = providers[c.id] else { throw notLoggedIn(c) }
        try sync.admitRefresh(p, c, shape: shape, now: clock.now())
        switch await (providers[c.id]?.renewer(of: stale) ?? c.provider).refresh(stale, shape: shape) {
        case .refreshed(let fresh):
            // Persist before anything else: the server may already have retired the old refresh token.
            // If the store refuses, the fresh session is still installed (the old one may be dead at the
            // server), but the caller hears that it was not saved.
            guard c.isCurrent(stale) else { return c.current ?? fresh }
            let installed = AccountSession.numbered(refresh: Self.merge(fresh, into: stale, shape: shape), of: stale)
            var unsaved: Error?
            do { try sync.save(c, installed) } catch { unsaved = error }
            guard c.replace(stale, with: installed) else { return c.current ?? installed }
            if shape.isNone {
                logger.info("refreshed \(id) (\(c.account))")
                events(.tokenRefreshed(provider: id, account: c.account, expiresAt: installed.expiresAt))
            } else {
                logger.info("obtained a token for \(shape) of \(id) (\(c.account))")
            }
            if let unsaved { throw AuthError.storeUnavailable(c.config, unsaved) }
            return installed
        case .rejected(let refusal):
            // Before declaring the session dead, look again: newer tokens in the store win.
            if let current = try sync.adopt(c), !current.isSameIssue(as: stale) { return current }
            // A learned provider's registration the server forgot is replaced now, for the login that follows.
            if c.config.learned != nil { await refreshRefused(c.config, refusal) }
            throw expire(c, stale, why: "the server rejected the refresh (\(refusal.line))", refusal: refusal)
        case .notGranted(let refusal):
            throw AuthError.scopeNotGranted(c.config, shape, refused: refusal)
        case .transient(let why):
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.unavailable(c.config, why)
        case .malformed(let why):
            // Retrying would get the same answer, but the session did nothing wrong: keep it.
            logger.warn("refreshing \(id) failed: \(why); the session is kept")
            throw AuthError.malformedResponse(c.config, why)
        case .failed(let error):
            logger.warn("renewing \(id) failed: \(error.message) The session is kept.")
            throw error
        case .unsupported:
            guard shape.isNone else {
                throw AuthError.scopeNotGranted(c.config, shape, "its \(c.config.flow.rawValue) flow cannot ask for tokens of other scopes, audiences or resources")
            }
            throw expire(c, stale, why: "the session cannot be refreshed")
        }
    }

    /// The session after a refresh of `shape`: for the session's own token, the new
    /// session keeping the account and its shaped tokens; for another shape, the old
    /// session with that token replaced and the refresh token the server returned.
    static func merge(_ fresh: Session, into stale: Session, shape: TokenShape) -> Session {
        var merged: Session
        if shape.isNone {
            merged = fresh
            merged.shaped = stale.pruningShapes(at: fresh.obtainedAt).shaped
        } else {
            merged = stale.replacing(ShapedToken(shape: shape, accessToken: fresh.accessToken, tokenType: fresh.tokenType,
                                                 expiresAt: fresh.expiresAt, obtainedAt: fresh.obtainedAt))
            merged.refreshToken = fresh.refreshToken ?? stale.refreshToken
        }
        merged.account = stale.account
        merged.flow = stale.flow
        merged.issuer = stale.issuer
        return merged
    }

    /// Ends `session` — unless another agent already replaced it in the store, in
    /// which case the replacement is returned. Takes the store lock so another
    /// agent's newer login is never removed.
    func expireUnlessReplaced(_ c: AccountSession, _ session: Session, why: String) async throws(AuthError) -> Session {
        let held = try? await sync.lock(c.config)
        defer { held?.unlock() }
        if held != nil {
            guard let current = try sync.adopt(c) else { throw notLoggedIn(c) }
            if !current.isSameIssue(as: session) { return current }
        }
        throw expire(c, session, why: why)
    }

    /// The server no longer accepts `session` (it said why when `refusal` is there): forget it and tell subscribers.
    func expire(_ c: AccountSession, _ session: Session, why: String, refusal: ServerRefusal? = nil) -> AuthError {
        if c.isCurrent(session) {
            sync.persist(c, nil)
            _ = c.clear(ifStill: session)
            if let p = providers[c.id] { try? sync.updateIndex(p) { $0.remove(c.account) } }
            logger.info("session of \(c.id) (\(c.account)) ended: \(why)")
            events(.loggedOut(provider: c.id, account: c.account, reason: .expired))
        }
        return AuthError.sessionExpired(c.config, refusal: refusal)
    }
}
