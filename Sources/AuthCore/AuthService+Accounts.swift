import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Logging
import Locking

/// Status, login, logout and the default account: what changes who is logged in.
extension AuthService {
    // MARK: status

    /// Every provider's accounts; the single-account fields describe the account
    /// that a request naming none would use under `choice`.
    public func status(providers filter: Set<String>? = nil, choice: AccountChoice = AccountChoice()) -> [ProviderStatus] {
        let (providers, order) = registry.state.withLock { ($0.providers, $0.order) }
        return order.filter { filter?.contains($0) ?? true }.map { id in
            let p = providers[id]!
            let used = (try? pick(p, choice)) ?? nil
            let defaultAccount = p.defaultSession?.account
            let accounts = p.loggedIn.compactMap { c in
                c.current.map { ProviderStatus.Account(id: c.account, user: $0.user ?? [:], expiresAt: $0.expiresAt, isDefault: c.account == defaultAccount) }
            }
            var status = ProviderStatus(id: id, displayName: p.config.displayName, flows: p.config.flows, fields: p.config.flow.descriptor.fields,
                                        session: used?.current.map { ProviderStatus.LoggedIn(user: $0.user ?? [:], expiresAt: $0.expiresAt) },
                                        account: used?.account, accounts: accounts)
            status.learned = p.config.learned
            // Stored sessions this agent does not use, and why: the keyring cannot be read here, or
            // another issuer than the configuration names issued it (kept until a login or logout).
            status.unreadable = p.all.compactMap { c in
                if let why = sync.trouble(c) { return ProviderStatus.Unreadable(account: c.account, reason: why) }
                return sync.foreignIssuer(c).map { issuer in
                    ProviderStatus.Unreadable(account: c.account, reason: AuthError.sessionOfAnotherIssuer(p.config, account: c.account, issuedBy: issuer).message)
                }
            }
            status.gitUsername = p.config.gitUsername
            status.interactive = p.config.interactive(deviceOffered: deviceOffered(p.config))
            return status
        }
    }

    // MARK: login / logout / default account

    /// Logs in through `flow` (nil: the provider's default); a different identity than the
    /// accounts already logged in adds an account, the same identity replaces that account's
    /// session — whichever of the provider's flows logged it in before.
    public func login(provider id: String, flow: Flow? = nil, credentials: Credentials?, context: LoginContext = LoginContext()) async throws(AuthError) -> LoginResult {
        try await login(try accounts(id), flow: flow, credentials: credentials, context: context)
    }

    /// `login` of `p`, which a learned provider's first login runs before `p` is registered (with
    /// the server it learned, and whether its client was `fresh`ly registered for this login).
    func login(_ p: ProviderAccounts, flow: Flow?, credentials: Credentials?, context: LoginContext,
               server: AuthorizationServer? = nil, fresh: Bool = false) async throws(AuthError) -> LoginResult {
        var chosen = flow ?? p.config.defaultFlow()
        if flow == nil, chosen == .deviceCode { chosen = p.config.defaultFlow(deviceOffered: await discoverDeviceOffer(p.config)) }
        guard let login = p.logins[chosen] else {
            throw AuthError.loginDenied(p.config, .noSuchFlow(chosen))
        }
        let asks = credentials == nil && !chosen.descriptor.fields.isEmpty ? context.askFields : nil
        // A derived provider's token is obtained once for all the user's processes, as a person's login is.
        guard chosen.descriptor.waitsForThePerson || asks != nil || p.config.subject != nil else { return try await logIn(p, login, chosen, credentials, context) }
        return try await oneLogin(p.id, provider: p.config, context: context, joining: newSession(of: p)) { () async throws(AuthError) in
            // A learned provider's registration the server forgot is replaced first (`ForgottenClients`).
            try await withKnownClient(p, chosen, server: server, fresh: fresh) { (p) async throws(AuthError) in
                guard let login = p.logins[chosen] else { throw AuthError.loginDenied(p.config, .noSuchFlow(chosen)) }
                return try await logIn(p, login, chosen, try await asks?(p.config, chosen) ?? credentials, context)
            }
        }
    }

    /// The login itself: the flow, then the session saved and installed.
    private func logIn(_ p: ProviderAccounts, _ login: LoginProvider, _ chosen: Flow, _ credentials: Credentials?,
                       _ context: LoginContext) async throws(AuthError) -> LoginResult {
        let id = p.id
        var fresh = try await login.login(credentials, context: context)
        if p.config.flows.count > 1 { fresh.flow = chosen }
        fresh.issuer = p.config.sessionIssuer
        var typed: String?
        if case .password(let username, _)? = credentials { typed = username }
        fresh.user = AccountNames.user(fresh.user, typed: typed, previous: nil)
        let account = AccountIdentity.of(user: fresh.user)
        fresh.account = account
        let held = try await sync.lock(p.config)
        defer { held.unlock() }
        let c = p.session(account)
        fresh.user = AccountNames.user(fresh.user, typed: nil, previous: c.current?.user)
        // Saved first (under the store lock, which every writer holds), then installed:
        // a login that is not saved would be lost with this process, so it fails and installs nothing.
        let session = c.numbered(login: fresh, storedGeneration: sync.storedGeneration(c))
        do {
            try sync.save(c, session)
            try sync.updateIndex(p) { $0.add(account) }
        } catch {
            throw AuthError.storeUnavailable(p.config, error)
        }
        c.install(login: session)
        logger.info("logged in to \(id) as \(AccountNames.display(session.user, account: account)) (account \(account))")
        let user = session.user ?? [:]
        events(.loggedIn(provider: id, account: account, user: user, expiresAt: session.expiresAt))
        return LoginResult(provider: id, account: account, user: user, expiresAt: session.expiresAt)
    }

    /// Logs out the account `choice` means, or every account; true when the server
    /// confirmed every revocation.
    public func logout(provider id: String, account choice: AccountChoice = AccountChoice(), all: Bool = false) async throws(AuthError) -> Bool {
        let p = try accounts(id)
        // The user asked to be logged out: if another agent holds the lock too long, log out anyway.
        let held = try? await sync.lock(p.config)
        defer { held?.unlock() }
        if held != nil { sync.check(p, evenIfBusy: true) }
        let targets = try all ? p.loggedIn : pick(p, choice).map { [$0] } ?? []
        var ended: [(AccountSession, Session)] = []
        for c in targets {
            guard let session = c.current else { continue }
            sync.persist(c, nil)
            _ = c.clear(ifStill: session)
            ended.append((c, session))
        }
        // A session another issuer issued is removed by an explicit logout alone, and revoked where it came from.
        let foreign = all ? sync.removeForeign(p) : choice.name(for: id).map { sync.removeForeign(p, account: $0) } ?? []
        var revoked = true
        for (account, session, issuer) in foreign {
            logger.info("removed the session of \(id) (\(account)) that \(issuer) issued")
            guard let session else { revoked = false; continue }
            if !(await revokeAtFormerIssuer(session, issuer: issuer, p.config)) { revoked = false }
        }
        guard !ended.isEmpty else { return !foreign.isEmpty && revoked }
        try? sync.updateIndex(p) { index in ended.forEach { index.remove($0.0.account) } }
        for (c, session) in ended {
            logger.info("logged out of \(id) (\(c.account))")
            events(.loggedOut(provider: id, account: c.account, reason: .logout))
            if !(await p.renewer(of: session).revoke(session)) { revoked = false }
        }
        return revoked
    }

    /// Makes the account `account` names the provider's default, for every agent on the store; returns its id.
    @discardableResult
    public func setDefaultAccount(provider id: String, account name: String) async throws(AuthError) -> String {
        let p = try accounts(id)
        let held = try await sync.lock(p.config)
        defer { held.unlock() }
        let account = try resolve(p, AccountChoice(account: name)).account
        do {
            try sync.updateIndex(p) { $0.defaultAccount = account }
        } catch {
            throw AuthError.storeUnavailable(p.config, error)
        }
        logger.info("\(account) is now the default account of \(id)")
        return account
    }

    /// Whether `config`'s server offers a device login, for a login about to choose its flow:
    /// `deviceOffered`, else its discovery document fetched now; nil when it cannot be had.
    func discoverDeviceOffer(_ config: ProviderConfig) async -> Bool? {
        if let known = deviceOffered(config) { return known }
        guard let issuer = config.issuer, config.discovers else { return nil }
        return (try? await config.metadata(discovery, issuer: issuer)).map { $0["device_authorization_endpoint"]?.stringValue != nil }
    }

    /// Whether `config`'s server offers a device login: yes with a configured endpoint, else what
    /// its discovery document said if it was read already (`status` asks nothing of the network); nil when unknown.
    func deviceOffered(_ config: ProviderConfig) -> Bool? {
        if config.deviceAuthorizationEndpoint != nil { return true }
        return config.issuer.flatMap(discovery.cached).map { $0["device_authorization_endpoint"]?.stringValue != nil }
    }

    /// Revokes a session at the issuer that issued it, which the configuration no longer names: that
    /// issuer's discovery document names its revocation endpoint (a session recorded under a token
    /// endpoint has none to find, and nothing is sent). The old server is the one that holds the
    /// token; the provider's client is presented as it was configured.
    func revokeAtFormerIssuer(_ session: Session, issuer: String, _ config: ProviderConfig) async -> Bool {
        var former = config
        former.issuer = issuer
        former.learned = nil
        (former.tokenEndpoint, former.revocationEndpoint, former.authorizationEndpoint) = (nil, nil, nil)
        (former.deviceAuthorizationEndpoint, former.userinfoEndpoint) = (nil, nil)
        let client = OAuthClient(config: former, http: http, clock: clock, discovery: discovery, lifetimeWarning: WarnOnce { _ in }, nonces: nonces)
        return await client.revoke(session, timeout: Self.revokeTimeout)
    }
}
