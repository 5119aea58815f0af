/// Which provider and which account a request means: by the id it names, by the URL it
/// goes to (`Router`), and by the account choice it carries.
extension AuthService {
    // MARK: Providers

    func accounts(_ id: String) throws(AuthError) -> ProviderAccounts { try registry.accounts(id) }

    public func knows(_ provider: String) -> Bool { providers[provider] != nil }

    /// The provider a request to `url` goes to (`explicit` when given), for ordering
    /// requests; nil when no provider covers it. Never throws: a bad request is
    /// refused by the operation itself.
    public func provider(forURL url: String, explicit: String?) -> String? {
        router.provider(forURL: url, explicit: explicit)
    }

    /// `sign`'s routing for callers that hand out the token itself (git's and kubectl's
    /// helpers), so they cannot disagree with `sign` on who covers a URL or which shape
    /// its origin asks for: the provider covering `url` (https or loopback only) and that
    /// shape; nil when none covers it. `explicit` must cover the URL (else 1006).
    public func coverage(url: String, provider explicit: String? = nil) throws(AuthError) -> Route? {
        try router.route(url: url, provider: explicit)
    }

    /// Whether a `login` of `provider` through `flow` (nil: its default) is ordered beside its
    /// logged-in accounts' requests (`ProviderAccounts.interactiveLoginLeavesAccounts`).
    func loginLeavesAccounts(provider id: String, flow: Flow?) -> Bool {
        guard let p = providers[id] else { return false }
        return p.interactiveLoginLeavesAccounts(flow ?? p.config.flow)
    }

    // MARK: Accounts

    /// No session in memory: not logged in — or, when the keyring could not be read, 1010; when the
    /// stored session was issued by another issuer than the configuration names, 1001 saying so.
    func notLoggedIn(_ p: ProviderAccounts, account: String? = nil) -> AuthError {
        if let why = sync.trouble(p) { return AuthError.keyringUnavailable(p.config, why) }
        if let (c, issuer) = sync.foreignSession(p, account: account) {
            return AuthError.sessionOfAnotherIssuer(p.config, account: c.account, issuedBy: issuer)
        }
        return AuthError.notLoggedIn(p.config, account: account)
    }

    func notLoggedIn(_ c: AccountSession) -> AuthError {
        if let why = sync.trouble(c) { return AuthError.keyringUnavailable(c.config, why) }
        // A provider forgotten meanwhile has no accounts to name.
        guard let p = providers[c.id] else { return AuthError.notLoggedIn(c.config) }
        return notLoggedIn(p, account: c.account)
    }

    /// Whether the account `choice` means has what a refresh needs (a refresh token, a refresh
    /// endpoint…). The command line's `refresh` asks first: `refresh` without one treats the
    /// current token as rejected and ends the session.
    public func canRefresh(provider id: String, account choice: AccountChoice = AccountChoice()) throws(AuthError) -> Bool {
        let c = try resolve(try accounts(id), choice)
        guard let session = c.current else { throw notLoggedIn(c) }
        return c.canRefresh(session)
    }

    /// The account a request uses (see `AccountChoice`); looks at the store once
    /// before answering "not logged in", since another agent may have logged in.
    func resolve(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> AccountSession {
        if let c = try pick(p, choice) { return c }
        sync.catchUp(p)
        if let c = try pick(p, choice) { return c }
        throw notLoggedIn(p, account: choice.name(for: p.id))
    }

    /// The account `choice` means, by id or by a name its user logs in with (`ProviderAccounts.account(named:)`).
    func pick(_ p: ProviderAccounts, _ choice: AccountChoice) throws(AuthError) -> AccountSession? {
        guard let name = choice.name(for: p.id) else { return p.defaultSession }
        return try p.account(named: name)
    }

    /// The id of the logged-in account `account` names (for `selectAccount`, which keeps the id);
    /// nil for nil. Throws unless the provider exists and the account is logged in to it.
    @discardableResult
    public func checkAccount(provider: String, account: String?) throws(AuthError) -> String? {
        let p = try accounts(provider)
        guard let account else { return nil }
        return try resolve(p, AccountChoice(account: account)).account
    }

    /// The logged-in account of `provider` that `name` names, as every request's
    /// `account` is resolved — what git sends as the username of `https://alice@host/…`.
    /// Nil when none does (or the provider is unknown); throws when several do.
    public func account(named name: String, provider: String) throws(AuthError) -> String? {
        guard let p = providers[provider] else { return nil }
        sync.catchUp(p)
        return try p.account(named: name)?.account
    }
}
