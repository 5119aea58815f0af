import AuthCore
import Dispatch
import JSONRPC
import Locking
import Logging

/// The bridge's logins: `sign` and `refresh` of the same `AuthService` every command uses (so
/// one refresh per expiry across bridges and agents on the store), and a terminal login when
/// the provider covering the URL has nobody logged in — one per provider across processes
/// (the interactive-login lock), one per bridge (every waiting message waits for the same one);
/// with no provider covering the URL, the provider is learned from the server's 401 first.
final class McpLogins: MCPAuthorizer {
    let session: LocalAgent
    /// `--account` and the token shape (`--scope`, `--audience`, `--resource`) the bridge signs with.
    let choice: AccountChoice
    let shape: TokenShape?
    let device: Bool
    /// The login under way in this bridge, by provider (or URL being learned): later messages wait for it.
    private let logins = Locked<[String: Task<Void, Error>]>([:])

    init(session: LocalAgent, account: AccountChoice, shape: TokenShape?, device: Bool) {
        (self.session, self.choice, self.shape, self.device) = (session, account, shape, device)
    }

    func signature(for url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
        do {
            return try await sign(url, method, at: target)
        } catch where error.code == .notLoggedIn || error.code == .sessionExpired {
            guard let provider = error.provider ?? session.service.provider(forURL: url, explicit: nil) else { throw error }
            try await logIn(provider: provider, url: url)
            return try await sign(url, method, at: target)
        }
    }

    /// A refused refresh ended the session (the core replaced a registration the server forgot
    /// meanwhile): the login at once, as for a message that finds nobody logged in — the person
    /// sees one prompt, not an error and then a login on the next call.
    func renewed(after rejected: Signature, url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
        do {
            _ = try await session.service.refresh(after: rejected)
        } catch where error.code == .sessionExpired || error.code == .notLoggedIn {
            try await logIn(provider: error.provider ?? rejected.provider, url: url)
        }
        return try await sign(url, method, at: target)
    }

    /// An unsigned request got a 401 and nothing covers the URL: learn what protects it from the
    /// challenge (RFC 9728 → RFC 8414 → registration) and log in — once in this bridge, and once
    /// across bridges (the interactive-login lock, keyed by the URL's origin: the provider's id is
    /// not known before it is learned). True when a provider covers the URL now.
    func logIn(url: String, challenge: BearerChallenge?) async throws(AuthError) -> Bool {
        try await once("learn " + url) { [session, device] in try await Self.learn(session, url: url, challenge: challenge, device: device) }
        return session.service.covers(url: url)
    }

    /// A learned resource's `403 insufficient_scope`: one step-up per provider in this bridge, and
    /// across bridges under the provider's interactive-login lock; then the new token's signing.
    /// When the resource asks for nothing the login lacks, the token sent is resent only if another
    /// request stepped up since it was signed.
    func steppedUp(after rejected: Signature, scopes: [String], url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
        guard let asked = session.service.scopeChallenge(url: url, asked: scopes) else { return nil }
        if asked.asksNothingNew {
            guard let now = try await sign(url, method, at: target), !now.isSameIssue(as: rejected) else { return nil }
            return now
        }
        try await once("step-up " + asked.provider) { [session, device] in
            try await Self.stepUp(session, provider: asked.provider, url: url, scopes: scopes, device: device)
        }
        return try await sign(url, method, at: target)
    }

    func keep(dpopNonce: String, url: String) { session.service.keep(dpopNonce: dpopNonce, for: url) }

    /// `Authorization` of the provider covering `url`, and for a DPoP-bound token the proof for this
    /// method and `target` (`url`, or the HTTP+SSE endpoint the bridge checked is on `url`'s origin:
    /// a learned provider covers `url`'s path, which the endpoint need not be under); nil when unsigned.
    private func sign(_ url: String, _ method: String, at target: String) async throws(AuthError) -> Signature? {
        guard let route = try session.service.coverage(url: url) else { return nil }
        return try await session.service.sign(route, url: target, account: choice, shape: shape, method: method)
    }

    /// One login for `provider`, shared by every message waiting in this bridge: a learned
    /// provider's as when it was learned (the browser opened where a display is, as `login URL`
    /// does — its own `openBrowser` is the configuration's default), a configured one's the terminal login.
    private func logIn(provider: String, url: String) async throws(AuthError) {
        guard session.service.providerConfig(provider)?.learned != nil else {
            return try await once(provider) { [session, choice, device] in
                try await Self.terminalLogin(session, provider: provider, account: choice, device: device)
            }
        }
        try await once("learn " + url) { [session, choice, device] in
            // Skipped when a session is there already (another process's login).
            session.service.checkStore()
            if (try? session.service.tokenNow(provider: provider, account: choice)) != nil { return }
            try await Self.learn(session, url: url, challenge: nil, device: device)
        }
    }

    /// Runs `login` unless one under `key` is under way in this bridge, then waits for that one.
    private func once(_ key: String, _ login: @escaping @Sendable () async throws -> Void) async throws(AuthError) {
        let task = logins.withLock { running -> Task<Void, Error> in
            if let task = running[key] { return task }
            let task = Task { try await login() }
            running[key] = task
            return task
        }
        defer { logins.withLock { if $0[key] == task { $0[key] = nil } } }
        do { try await task.value } catch let error as AuthError { throw error } catch {
            throw AuthError.loginFailed(error)
        }
    }

    /// `AuthService.learn` (one learning per API across processes: a bridge that waited finds the
    /// API learned and logged in); the prompt as `auth-agent login` shows it, the browser opened
    /// where a display is (as `login URL` does).
    private static func learn(_ session: LocalAgent, url: String, challenge: BearerChallenge?, device: Bool) async throws {
        let origin = Origin(url: url)
        let name = origin?.description ?? url
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let result = try await session.service.learn(url: url, challenge: challenge,
                                                     flow: device ? .deviceCode : nil, context: context(live))
        Logger.stderrSink("Logged in to \(name) (learned as provider \(result.provider)).")
    }

    /// The step-up (one login per provider across processes, the core's), skipped when another
    /// process stepped up meanwhile (the provider, re-read from the store, has the scopes asked now).
    private static func stepUp(_ session: LocalAgent, provider: String, url: String, scopes: [String], device: Bool) async throws {
        session.service.checkStore()
        guard let asked = session.service.scopeChallenge(url: url, asked: scopes), !asked.asksNothingNew else { return }
        let name = Origin(url: url)?.description ?? url
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        _ = try await session.service.stepUp(asked, flow: device ? .deviceCode : nil, context: context(live))
        Logger.stderrSink("Logged in to \(name) again for the scopes \(asked.scopes.joined(separator: " ")).")
    }

    /// A URL elicitation the host cannot show (issue 33 item 5), under the bridge's login rules: the
    /// server, the page's origin, the full URL and the server's message on stderr as a login prompt is
    /// (escaped: all of it comes from the server), and the browser opened where a display is, as for
    /// the bridge's logins. True when a browser was opened. MCP 2025-11-25 wants the person's consent
    /// before navigation; a bridge under a desktop host has nobody to ask, so opening it here is the
    /// same standing consent its logins take (the login opens the browser where a display is).
    static func show(_ elicitation: URLElicitation, server: String) -> Bool {
        let e = TerminalText.escaped
        let opens = LivePromptLine.canOpenBrowser(ProcessEnvironment.current())
        let page = Origin(url: elicitation.url)?.description ?? elicitation.url
        var text = "The MCP server \(e(Origin(url: server)?.description ?? server)) asks you to open a page at \(e(page)):\n  \(e(elicitation.url))"
        if !elicitation.message.isEmpty { text += "\n  \(e(elicitation.message))" }
        text += opens ? "\nOpening it in your browser." : "\nNo browser can be opened here: open it yourself if you expected it."
        Logger.stderrSink(text)
        if opens { BrowserLauncher().open(checked: elicitation.url) }
        return opens
    }

    /// The terminal presents the login as `auth-agent login URL` does; the browser opened where one can be.
    private static func context(_ live: LivePromptLine) -> LoginContext {
        TerminalLogin.presenter(live, openBrowser: LivePromptLine.canOpenBrowser(ProcessEnvironment.current()))
    }

    /// The core's login (one per provider across processes) presented at the terminal, skipped when
    /// a session is there already (another process's login; one in progress is waited for by the core).
    private static func terminalLogin(_ session: LocalAgent, provider: String, account: AccountChoice, device: Bool) async throws {
        session.service.checkStore()
        if (try? session.service.tokenNow(provider: provider, account: account)) != nil { return }
        guard let config = session.service.providerConfig(provider) else { throw AuthError.unknownProvider(provider, .notConfigured(known: [])) }
        let options = TerminalLogin.Options(flow: device ? .device : nil)
        let flow: Flow
        do { flow = try TerminalLogin.flow(options, provider: config) } catch {
            throw AuthError.relayed(.loginDenied, error.message, provider: provider)
        }
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let result = try await session.service.login(provider: provider, flow: options.choosesFlow ? flow : nil, credentials: nil,
                                                     context: TerminalLogin.presenter(live, askFields: TerminalLogin.askAtTerminal(options)))
        Logger.stderrSink(TerminalLogin.loggedIn(result, displayName: config.displayName))
    }
}
