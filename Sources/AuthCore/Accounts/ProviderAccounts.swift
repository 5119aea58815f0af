import Locking

/// One provider's accounts in this process: an `AccountSession` per account
/// (kept once created, so a refresh in flight never loses its account session), and
/// the account list with its default as last read from or written to the store.
///
/// The accounts are the provider's, whichever of its flows logged them in: the
/// flows one provider may list refresh and revoke alike (`FlowDescriptor.sharesAccounts`),
/// each session through the client of the flow that logged it in (`renewer(of:)`).
final class ProviderAccounts: Sendable {
    let config: ProviderConfig
    /// The default flow's provider.
    let provider: LoginProvider
    /// A provider per configured flow, for `login`.
    let logins: [Flow: LoginProvider]

    private struct State {
        var sessions: [String: AccountSession] = [:]
        var index = AccountIndex()
    }

    private let state = Locked(State())

    init(config: ProviderConfig, logins: [Flow: LoginProvider]) {
        self.config = config
        self.provider = logins[config.flow]!
        self.logins = logins
    }

    var id: String { config.id }

    /// What refreshes and revokes `session`: the flow that logged it in, whose client issued its tokens.
    func renewer(of session: Session) -> LoginProvider { session.flow.flatMap { logins[$0] } ?? provider }

    /// The account's session, created (logged out) if this process has none yet.
    func session(_ account: String) -> AccountSession {
        state.withLock { s in
            if let c = s.sessions[account] { return c }
            let c = AccountSession(config: config, provider: provider, account: account, session: nil)
            s.sessions[account] = c
            return c
        }
    }

    func existing(_ account: String) -> AccountSession? { state.withLock { $0.sessions[account] } }

    /// Every account session, logged in or not (for store checks and shutdown).
    var all: [AccountSession] { state.withLock { Array($0.sessions.values) } }

    var index: AccountIndex {
        get { state.withLock { $0.index } }
        set { state.withLock { $0.index = newValue } }
    }

    /// The logged-in accounts, in login order. Every write of a session also writes the
    /// list (login adds to it, logout and expiry remove from it), so the list names them all.
    var loggedIn: [AccountSession] {
        state.withLock { s in s.index.accounts.compactMap { s.sessions[$0] } }.filter(\.isLoggedIn)
    }

    /// The logged-in account `name` names: the account with that id, else the one
    /// whose user logs in with that name (`AccountNames.matches`). Nil when none does;
    /// several is an error listing them, never a guess — a token is never sent as the wrong person.
    func account(named name: String) throws(AuthError) -> AccountSession? {
        if let c = existing(name), c.isLoggedIn { return c }
        let matching = loggedIn.filter { AccountNames.matches(name, account: $0.account, user: $0.current?.user) }
        guard matching.count > 1 else { return matching.first }
        let list = matching.map { "\($0.account) (\(AccountNames.display($0.current?.user, account: $0.account)))" }.joined(separator: ", ")
        throw AuthError.ambiguousAccount(name, of: config, matches: list)
    }

    /// Whether a login now leaves the provider's requests running while it waits for the
    /// person (a device code, a browser: for as long as the code lives). With an account
    /// logged in, such a login can only add another or renew one, so a request for a
    /// logged-in account is answered from it meanwhile; with none, a request sent after
    /// the login needs what it brings, and waits. Non-interactive logins answer soon: they
    /// keep the plain order.
    func interactiveLoginLeavesAccounts(_ flow: Flow) -> Bool {
        flow.descriptor.waitsForThePerson && !loggedIn.isEmpty
    }

    /// The account a request uses when it names none and its connection selected none:
    /// the stored default if it is logged in, else the earliest logged-in account.
    var defaultSession: AccountSession? {
        // On `sign`'s hot path: one lookup under the lock, nothing copied out.
        if let c = state.withLock({ s in s.index.defaultAccount.flatMap { s.sessions[$0] } }), c.isLoggedIn { return c }
        return loggedIn.first
    }
}
