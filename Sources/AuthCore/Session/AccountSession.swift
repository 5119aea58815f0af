#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking

/// The live state of one account of a provider as one value behind one lock —
/// the current session and its `Authorization` value, the refreshes in flight
/// (one per token shape), the background-refresh backoff — and the decisions
/// on it: which token a request uses now (`credential(_:timing:now:)`) and whether
/// a session is still the one (`Session.isSameIssue(as:)`), in the shape of
/// Alamofire's `AuthenticationInterceptor`.
///
/// Single flight, per shape: however many callers find a token stale at once, one
/// refresh runs and all of them await it; a caller that arrives after it
/// finished sees the new session and refreshes nothing. A refresh result is
/// installed (and persisted) only if the session it started from is still
/// current, so a logout or a new login during a refresh is never undone.
/// This is the only place that assigns a session's `generation`.
///
/// The lock guards memory only and is never held across I/O: writes to the
/// store are serialized by the store's own per-provider lock, which every
/// writer — and `StoreSync`'s re-read of what other agents wrote — holds.
final class AccountSession: @unchecked Sendable {
    let config: ProviderConfig
    let provider: LoginProvider
    /// The account's id (`AccountIdentity`) and its record's key in the store.
    let account: String
    let key: String

    private let lock = Lock()
    private var session: Session?
    /// `session` with its `Authorization` value, built once per session.
    private var snapshotted: Snapshot?
    /// The refresh running for each shape, with the session it started from.
    private var inFlight: [TokenShape: (from: Session, task: Task<Session, Error>)] = [:]
    /// When a failed background refresh of a shape may be tried again.
    private var backoff: [TokenShape: RefreshBackoff] = [:]
    /// Shapes whose background refresh has been claimed and has not ended: at most one each.
    private var backgroundRefreshing: Set<TokenShape> = []

    init(config: ProviderConfig, provider: LoginProvider, account: String, session: Session?) {
        self.config = config
        self.provider = provider
        self.account = account
        self.key = StoreKeys.account(account, of: config.id)
        install(session)
    }

    /// The provider's id.
    var id: String { config.id }

    var current: Session? {
        lock.lock()
        defer { lock.unlock() }
        return session
    }

    /// A session and its `Authorization` value, as one object: `sign`'s hot path
    /// takes it with one retain instead of copying the session's strings.
    final class Snapshot: Sendable {
        let session: Session
        let authorization: String
        /// The session's own token as a request uses it (`Session.credential(.none)`), built once.
        let credential: Credential

        /// `signedAs`: the provider and account whose session this is, for `credential`'s ready `sign` answer.
        init(_ session: Session, signedAs owner: (provider: String, account: String)? = nil) {
            self.session = session
            authorization = session.authorization
            credential = Credential(session, authorization: authorization, signedAs: owner)
        }
    }

    /// The current session and its `Authorization` value, in one lock: `sign`'s fast path.
    func snapshot() -> Snapshot? {
        lock.lock()
        defer { lock.unlock() }
        return snapshotted
    }

    // MARK: Freshness

    /// What a request does with a token now: `RefreshTiming.decision` with the token and
    /// the session it comes from.
    /// The session travels as its `Snapshot`, a reference: a `Session` inline would make every
    /// answer of `sign`'s fast path copy a few hundred bytes (measured: 10 % of a plain `sign`).
    enum CredentialNow {
        case use(Credential)
        /// Use it; `stale` is refreshed in the background, and nobody waits for that.
        case useAndRefreshInBackground(Credential, stale: Snapshot)
        /// Obtain a token from this session first: the token is expired (or nearly), or there is none of the shape yet.
        case wait(Snapshot)
    }

    /// The token of `shape` a request uses at `now`, and whether it must wait — the one
    /// freshness decision, for `sign`'s fast path and every caller that can wait; nil
    /// when logged out. One lock and one retain: the session's own token reuses the
    /// snapshot's `Authorization` value, and whether the session can be refreshed is
    /// only asked of a token that is not fresh.
    func credential(_ shape: TokenShape, timing: RefreshTiming, now: Date) -> CredentialNow? {
        guard let snapshot = snapshot() else { return nil }
        // Not `let session = snapshot.session`: that copies the whole session, a retain per field.
        let held = shape.isNone ? snapshot.credential : snapshot.session.credential(shape)
        return decide(held, of: snapshot, shape, timing: timing, now: now)
    }

    /// The decision on `held`, the token of `shape` of `snapshot`'s session (a refresh's result, or the current one).
    /// A shaped token is always worth asking for: the refresh token gets it, or the server says why not.
    func decide(_ held: Credential?, of snapshot: Snapshot, _ shape: TokenShape, timing: RefreshTiming, now: Date) -> CredentialNow {
        let decision = timing.decision(for: held, refreshable: !shape.isNone || canRefresh(snapshot.session), at: now)
        guard let held, decision != .wait else { return .wait(snapshot) }
        return decision == .use ? .use(held) : .useAndRefreshInBackground(held, stale: snapshot)
    }

    /// Whether `session` has what a refresh needs (a refresh token, a refresh endpoint…), as its flow says.
    func canRefresh(_ session: Session) -> Bool {
        config.flow.descriptor.canRefresh(config, session)
    }

    /// Whether a session is held (cheap; for listing accounts).
    var isLoggedIn: Bool {
        lock.lock()
        defer { lock.unlock() }
        return session != nil
    }

    private func install(_ s: Session?) {
        session = s
        snapshotted = s.map { Snapshot($0, signedAs: (config.id, account)) }
    }

    /// A new login numbered after both the session held here and the one in the
    /// store (`storedGeneration`), so every agent on the store sees a newer generation.
    func numbered(login fresh: Session, storedGeneration: Int?) -> Session {
        lock.lock()
        defer { lock.unlock() }
        var numbered = fresh
        numbered.generation = max(storedGeneration ?? 0, session?.generation ?? 0) + 1
        return numbered
    }

    /// Installs a login that was saved.
    func install(login: Session) {
        lock.lock()
        defer { lock.unlock() }
        install(login)
    }

    /// Whether `expected` is still the session.
    func isCurrent(_ expected: Session) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return session?.isSameIssue(as: expected) ?? false
    }

    /// Removes the session if it is still `expected`; returns whether it did.
    func clear(ifStill expected: Session) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session, s.isSameIssue(as: expected) else { return false }
        install(nil)
        return true
    }

    /// Brings memory in line with what the store holds after another agent
    /// process changed it (read by the caller under the store lock). Returns the
    /// event that describes the change, if any.
    func reconcile(with stored: Session?) -> AuthEvent? {
        lock.lock()
        defer { lock.unlock() }
        let event: AuthEvent
        switch (session, stored) {
        case (nil, nil):
            return nil
        case (let current?, let stored?):
            if current.isSameIssue(as: stored) { return nil }
            if current.user != stored.user {
                event = .loggedIn(provider: config.id, account: account, user: stored.user ?? [:], expiresAt: stored.expiresAt)
            } else if current.accessToken != stored.accessToken {
                event = .tokenRefreshed(provider: config.id, account: account, expiresAt: stored.expiresAt)
            } else {
                install(stored)  // another shape's token or a rotated refresh token: nothing a host sees
                return nil
            }
        case (nil, let stored?):
            event = .loggedIn(provider: config.id, account: account, user: stored.user ?? [:], expiresAt: stored.expiresAt)
        case (_?, nil):
            event = .loggedOut(provider: config.id, account: account, reason: .external)
        }
        install(stored)
        return event
    }

    // MARK: Refresh

    enum RefreshStart {
        /// Someone already replaced the stale session: use this one.
        case alreadyFresh(Session)
        case joined(Task<Session, Error>)
        case started(Task<Session, Error>)
        case loggedOut
        /// No refresh was running and none may start (the agent is shutting down).
        case refused
    }

    /// Starts (or joins) the refresh of `stale`'s token of `shape`. `work` runs at
    /// most once per stale session and shape.
    func beginRefresh(of stale: Session, shape: TokenShape = .none, mayStart: Bool = true,
                      work: @escaping @Sendable () async throws -> Session) -> RefreshStart {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session else { return .loggedOut }
        if !s.isSameIssue(as: stale) { return .alreadyFresh(s) }
        if let running = inFlight[shape], running.from.isSameIssue(as: s) { return .joined(running.task) }
        guard mayStart else { return .refused }
        let task = Task { [weak self] in
            defer { self?.endRefresh(shape: shape, from: s) }
            return try await work()
        }
        inFlight[shape] = (s, task)
        return .started(task)
    }

    /// Claims the one background refresh of `stale`, if it should start now: it is
    /// still the session, nothing is refreshing it, and the backoff after a failure
    /// has passed. Checked on `sign`'s fast path, so it must stay cheap.
    func claimBackgroundRefresh(of stale: Session, shape: TokenShape = .none, now: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !backgroundRefreshing.contains(shape), let s = session, s.isSameIssue(as: stale), inFlight[shape] == nil,
              backoff[shape]?.allows(at: now) ?? true else { return false }
        backgroundRefreshing.insert(shape)
        return true
    }

    /// Ends the claim; a failure pushes the next attempt back.
    func backgroundRefreshEnded(shape: TokenShape = .none, failed: Bool, now: Date) {
        lock.lock()
        defer { lock.unlock() }
        backgroundRefreshing.remove(shape)
        if failed { backoff[shape, default: RefreshBackoff()].failed(at: now) } else { backoff[shape] = nil }
    }

    /// The refreshes talking to the server (or waiting for the store lock).
    var refreshesInFlight: [Task<Session, Error>] {
        lock.lock()
        defer { lock.unlock() }
        return inFlight.values.map(\.task)
    }

    /// Forgets the refresh of `shape` that started from `from` — not a later one.
    private func endRefresh(shape: TokenShape, from: Session) {
        lock.lock()
        defer { lock.unlock() }
        if inFlight[shape]?.from.isSameIssue(as: from) == true { inFlight[shape] = nil }
    }

    /// The refresh of `stale`, numbered as its next generation.
    static func numbered(refresh fresh: Session, of stale: Session) -> Session {
        var numbered = fresh
        numbered.generation = stale.generation + 1
        return numbered
    }

    /// Installs `fresh` in place of `stale` if `stale` is still current; returns whether it did.
    func replace(_ stale: Session, with fresh: Session) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session, s.isSameIssue(as: stale) else { return false }
        install(fresh)
        return true
    }
}

extension Session {
    /// The `Authorization` header value.
    var authorization: String { Credential.authorization(tokenType: tokenType, accessToken: accessToken) }

    /// "Nobody replaced this session meanwhile" — the one check every install, refresh,
    /// expiry, join of a refresh in flight and re-read of the store makes: the same
    /// generation (every write numbers the session anew) and the same tokens (a login
    /// after a logout may start the numbering again).
    func isSameIssue(as other: Session) -> Bool {
        generation == other.generation && accessToken == other.accessToken && refreshToken == other.refreshToken
    }
}
