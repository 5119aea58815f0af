/// One interactive login per provider at a time, across every agent and helper process of the
/// user: a storm of them — the helpers kubectl runs in parallel, a host's `login` beside the
/// command line's, the MCP bridge, `fetch` with `login: "ifNeeded"` — makes one authorization.
/// Every door reaches it through `AuthService.login` and learning; none takes a lock of its own.
extension AuthService {
    /// How long a login waits for another one of the same provider before giving up (1005).
    static let loginWait = 15.0 * 60

    /// How long a login waits for the lock before saying so: a login cancelled a moment ago frees
    /// its lock as its task unwinds, just after its host was answered; that is no login in progress.
    static let quietLoginWait = 0.5

    /// Runs `login` holding the store's interactive-login lock `name`. A login that another one
    /// ended before it (waited for, or finished just before this one took the lock) answers with
    /// what that one brought (`joining`, when that finds it), else logs in.
    func oneLogin(_ name: String, provider: ProviderConfig?, context: LoginContext, joining: @escaping @Sendable () -> LoginResult?,
                  _ login: () async throws(AuthError) -> LoginResult) async throws(AuthError) -> LoginResult {
        let store = sync.store
        let held: StoreLock?
        do {
            if let now = try await clock.poll(until: clock.deadline(after: Self.quietLoginWait), { try store.tryLoginLock(name) }) {
                held = now
            } else {
                logger.info("another login to \(name) is in progress; waiting for it to finish")
                context.waiting("another login to \(name) is in progress; waiting for it to finish…")
                held = try await clock.poll(until: clock.deadline(after: Self.loginWait)) { try store.tryLoginLock(name) }
            }
        } catch is CancellationError {
            throw AuthError.loginCancelled(provider)
        } catch {
            throw AuthError.loginLockUnavailable(name, error)
        }
        guard let held else { throw AuthError.loginStillInProgress(name) }
        defer { held.unlock() }
        // Also when the lock was free: a login that ended between this one's start and the lock
        // (another process's, which this one never saw waiting) is joined, not repeated.
        if let joined = joining() { return joined }
        return try await login()
    }

    /// What a login of `p` that waits finds when the login it waited for is done: an account whose
    /// session (read from the store, where another process put it) is not one it had before.
    func newSession(of p: ProviderAccounts) -> @Sendable () -> LoginResult? {
        let before = p.loggedIn.compactMap { c in c.current.map { (c.account, $0) } }
        return { [sync] in
            sync.catchUp(p)
            for c in p.loggedIn {
                guard let now = c.current, !before.contains(where: { $0.0 == c.account && $0.1.isSameIssue(as: now) }) else { continue }
                return LoginResult(provider: p.id, account: c.account, user: now.user ?? [:], expiresAt: now.expiresAt)
            }
            return nil
        }
    }
}
