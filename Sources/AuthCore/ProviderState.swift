import Foundation
import JSON

/// The live state of one provider — its session and the refresh in flight —
/// as one small state machine behind one lock.
///
/// Single flight: however many callers find the token stale at once, one
/// refresh runs and all of them await it; a caller that arrives after it
/// finished sees the new session and refreshes nothing. A refresh result is
/// installed (and persisted) only if the session it started from is still
/// current, so a logout or a new login during a refresh is never undone.
final class ProviderState: @unchecked Sendable {
    let config: ProviderConfig
    let provider: LoginProvider

    private let lock = NSLock()
    private var session: Session?
    /// The `sign` answer for the current session, built (and serialized) once per session.
    private var signResult: JSONValue = .null
    private var signText = JSONText(.null)
    private var inFlight: (generation: Int, task: Task<Session, Error>)?
    private var recentRefreshes: [Date] = []
    /// When a failed background refresh may be tried again.
    private var backoff = RefreshBackoff()
    /// A background refresh has been claimed and has not ended: at most one at a time.
    private var backgroundRefreshing = false
    /// Logins and logouts under way, and the requests waiting for them to settle.
    private var changesInFlight = 0
    /// Opens when the most recently begun change has finished.
    private var lastChange: Gate?
    /// Requests that had to wait (refresh, network) and began after `lastChange`.
    private var pendingReads: [Gate] = []

    static let refreshLimit = 5
    static let refreshLimitWindow: TimeInterval = 30

    init(config: ProviderConfig, provider: LoginProvider, session: Session?) {
        self.config = config
        self.provider = provider
        install(session)
    }

    var id: String { config.id }

    var current: Session? {
        lock.lock()
        defer { lock.unlock() }
        return session
    }

    /// The current session and its prepared `sign` answer, in one lock.
    func snapshot() -> (Session, JSONText)? {
        lock.lock()
        defer { lock.unlock() }
        guard let session else { return nil }
        return (session, signText)
    }

    /// The prepared `sign` answer for the current session, if any.
    var signAnswer: JSONValue? {
        lock.lock()
        defer { lock.unlock() }
        return session == nil ? nil : signResult
    }

    // MARK: Ordering of changes

    /// Marks a login or logout as started. Requests for this provider that arrive
    /// afterwards wait for it, so a script that pipes `login` then `sign` signs
    /// with the new session, and changes run in the order they arrived;
    /// requests for other providers are not held back.
    func beginChange() -> (previous: [Gate], mine: Gate) {
        let mine = Gate()
        lock.lock()
        changesInFlight += 1
        let previous = (lastChange.map { [$0] } ?? []) + pendingReads.filter { !$0.opened }
        lastChange = mine
        pendingReads = []
        lock.unlock()
        return (previous, mine)
    }

    /// Marks a request that must wait (for a refresh or an earlier change) as
    /// started: a later login or logout of this provider waits for it.
    func beginRead() -> (previous: Gate?, mine: Gate) {
        let mine = Gate()
        lock.lock()
        defer { lock.unlock() }
        pendingReads.removeAll { $0.opened }
        pendingReads.append(mine)
        return (changesInFlight > 0 ? lastChange : nil, mine)
    }

    func endChange(_ mine: Gate) {
        lock.lock()
        changesInFlight -= 1
        lock.unlock()
        mine.open()
    }

    /// The gate of the latest login or logout still under way, if any: a request
    /// that arrives now waits for it (and, through it, for every earlier one).
    func pendingChange() -> Gate? {
        lock.lock()
        defer { lock.unlock() }
        return changesInFlight > 0 ? lastChange : nil
    }

    private func install(_ s: Session?) {
        session = s
        if let s {
            signResult = [
                "signed": true, "provider": .string(config.id),
                "headers": ["Authorization": .string(s.authorization)],
                "expiresAt": RFC3339.json(s.expiresAt),
            ]
        } else {
            signResult = .null
        }
        signText = JSONText(signResult)
    }

    /// Replaces the session unconditionally (login); `persist` runs under the lock so
    /// the store and memory never disagree about the order of writes.
    func replace(with new: Session?, persist: (Session?) -> Void) {
        lock.lock()
        defer { lock.unlock() }
        persist(new)
        install(new)
    }

    /// Removes the session if it is still `expected` (by generation and token); returns whether it did.
    func clear(ifStill expected: Session, persist: () -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session, s.sameTokens(as: expected) else { return false }
        persist()
        install(nil)
        return true
    }

    /// Takes the session away (logout).
    func take(persist: () -> Void) -> Session? {
        lock.lock()
        defer { lock.unlock() }
        let s = session
        if s != nil { persist() }
        install(nil)
        return s
    }

    /// Brings memory in line with the store after another agent process changed
    /// it. `load` runs under this state's lock, so a write of this process can
    /// never be undone by an older read. Returns the event that describes the
    /// change, if there was one. A `load` that throws changes nothing.
    func reconcile<Failure: Error>(load: () throws(Failure) -> Session?) throws(Failure) -> AuthEvent? {
        lock.lock()
        defer { lock.unlock() }
        let stored = try load()
        let event: AuthEvent
        switch (session, stored) {
        case (nil, nil):
            return nil
        case (let current?, let stored?):
            if current.sameTokens(as: stored) { return nil }
            if current.user != stored.user {
                event = .loggedIn(provider: config.id, user: stored.user ?? [:], expiresAt: stored.expiresAt)
            } else {
                event = .tokenRefreshed(provider: config.id, expiresAt: stored.expiresAt)
            }
        case (nil, let stored?):
            event = .loggedIn(provider: config.id, user: stored.user ?? [:], expiresAt: stored.expiresAt)
        case (_?, nil):
            event = .loggedOut(provider: config.id, reason: .external)
        }
        install(stored)
        return event
    }

    enum RefreshStart {
        /// Someone already replaced the stale session: use this one.
        case alreadyFresh(Session)
        case joined(Task<Session, Error>)
        case started(Task<Session, Error>)
        case loggedOut
        /// No refresh was running and none may start (the agent is shutting down).
        case refused
    }

    /// Starts (or joins) the refresh of `stale`. `work` runs at most once per stale session.
    func beginRefresh(of stale: Session, mayStart: Bool = true, work: @escaping @Sendable () async throws -> Session) -> RefreshStart {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session else { return .loggedOut }
        if !s.sameTokens(as: stale) { return .alreadyFresh(s) }
        if let inFlight, inFlight.generation == s.generation { return .joined(inFlight.task) }
        guard mayStart else { return .refused }
        let generation = s.generation
        let task = Task { [weak self] in
            defer { self?.endRefresh(generation: generation) }
            return try await work()
        }
        inFlight = (generation, task)
        return .started(task)
    }

    /// Counts a refresh about to be sent to the server; false when there were
    /// already `refreshLimit` within the window (refreshes another agent did,
    /// and this one merely picked up, do not count).
    func admitRefresh(now: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        recentRefreshes.removeAll { now.timeIntervalSince($0) >= Self.refreshLimitWindow }
        if recentRefreshes.count >= Self.refreshLimit { return false }
        recentRefreshes.append(now)
        return true
    }

    /// Claims the one background refresh of `stale`, if it should start now: it is
    /// still the session, nothing is refreshing it, and the backoff after a failure
    /// has passed. Checked on `sign`'s fast path, so it must stay cheap.
    func claimBackgroundRefresh(of stale: Session, now: Date) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard !backgroundRefreshing, let s = session, s.sameTokens(as: stale), inFlight == nil, backoff.allows(at: now) else { return false }
        backgroundRefreshing = true
        return true
    }

    /// Ends the claim; a failure pushes the next attempt back.
    func backgroundRefreshEnded(failed: Bool, now: Date) {
        lock.lock()
        defer { lock.unlock() }
        backgroundRefreshing = false
        if failed { backoff.failed(at: now) } else { backoff.succeeded() }
    }

    /// The refresh talking to the server (or waiting for the store lock), if any.
    var refreshInFlight: Task<Session, Error>? {
        lock.lock()
        defer { lock.unlock() }
        return inFlight?.task
    }

    private func endRefresh(generation: Int) {
        lock.lock()
        defer { lock.unlock() }
        if inFlight?.generation == generation { inFlight = nil }
    }

    /// Installs a refreshed session if `stale` is still current; persistence first.
    func complete(refreshOf stale: Session, with fresh: Session, persist: (Session) -> Void) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let s = session, s.sameTokens(as: stale) else { return false }
        persist(fresh)
        install(fresh)
        return true
    }
}

extension Session {
    /// The `Authorization` header value.
    var authorization: String { "\(tokenType) \(accessToken)" }

    /// Same tokens and generation: "nobody replaced this session meanwhile".
    func sameTokens(as other: Session) -> Bool {
        generation == other.generation && accessToken == other.accessToken && refreshToken == other.refreshToken
    }
}
