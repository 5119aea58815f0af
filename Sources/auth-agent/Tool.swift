#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Logging

/// Runs a one-shot subcommand and exits with its code (see `ToolFailure`); its answer alone goes
/// to stdout, everything for people to stderr.
enum Tool {
    static func run(_ command: ToolCommand) -> Never {
        // Only a login may wait on the user; for the rest Ctrl-C's default (end now) loses nothing,
        // as the store is only ever written whole, and start-up skips the signal source.
        if command.mayLogIn { Interrupt.install() }
        var opened: ToolSession?
        do {
            let output = try perform(command) { opened = $0 }
            if !output.isEmpty { StandardStream.write(Array(output.utf8)) }
            // A stale token was answered at once and its refresh runs on: let it reach the store.
            opened?.service.finishRefreshes()
            exit(0)
        } catch {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(advice(error, command: command, session: opened)))")
            exit(error.code.rawValue)
        }
    }

    /// The failure's message with what to do next: how to start when nothing is configured, and
    /// `run: auth-agent login P` when nobody is logged in (as git-credential and kubectl-credential say).
    static func advice(_ failure: ToolFailure, command: ToolCommand, session: ToolSession?) -> String {
        if failure.authCode == .unknownProvider, let session, session.config.providers.isEmpty {
            return ConfigCommand.noConfiguration(session.configPath)
        }
        switch command.action {
        case .token, .refresh, .header, .fetch:
            if failure.needsLogin, let provider = failure.provider { return "\(failure.message) run: auth-agent login \(provider)" }
        default: break
        }
        return failure.message
    }

    /// What the command prints on stdout when it succeeds.
    static func perform(_ command: ToolCommand, opened: (ToolSession) -> Void = { _ in }) throws(ToolFailure) -> String {
        // Configuration commands work on the file itself: no store to open, and a missing or broken file is their business.
        if case .config(let action) = command.action { return try ConfigCommand.run(action, command: command) }
        // A socket agent serves the session's tools: its configuration and store, not this process's.
        if RemoteTool.serves(command.action), let link = AgentLink.connect(environment: ProcessEnvironment.current()) {
            return try RemoteTool.perform(command, link: link)
        }
        let session = try ToolSession.open(command)
        opened(session)
        switch command.action {
        case .status(let json):
            if session.config.providers.isEmpty { Logger.stderrSink("auth-agent: " + ConfigCommand.noConfiguration(session.configPath)) }
            let status = AuthMethods.statusResult(session.service.status(), store: session.service.storeStatus)
            return json ? JSONSerializer.string(status) + "\n" : StatusTable.render(status, store: session.service.storeStatus?.kind.rawValue ?? "-")
        case .token(let provider, let json):
            let token = try session.token(provider, validFor: command.minValid)
            guard json else { return token.token + "\n" }
            return JSONSerializer.string(["accessToken": .string(token.token), "tokenType": .string(token.type),
                                          "expiresAt": token.expiresAt.map { .string($0) } ?? .null]) + "\n"
        case .header(let url, let method):
            return try header(url, method: method, session)
        case .fetch(let options):
            return try FetchCommand.run(options, session: session)
        case .refresh(let provider):
            let result = try session.refresh(provider)
            let until = result.expiresAt.map { " (token valid until \(RFC3339.format($0)))" } ?? ""
            Logger.stderrSink("Refreshed the token of \(try session.provider(provider).displayName)\(until).")
            return ""
        case .logout(let provider):
            let service = session.service
            let (choice, all) = (session.choice, command.all)
            let name = try session.provider(provider).displayName
            // Saying "logged out" when nobody was would hide a typo in --account, or a login made with another store.
            if let status = service.status(providers: [provider], choice: choice).first, all ? status.accounts.isEmpty : status.session == nil {
                Logger.stderrSink(command.account.map { "Account \($0) is not logged in to \(name)." } ?? "Nobody is logged in to \(name).")
                return ""
            }
            let revoked = try ToolSession.wait(timeout: session.requestTimeout) { () async throws(AuthError) in
                try await service.logout(provider: provider, account: choice, all: all)
            }
            let what = all ? "every account of \(name)" : command.account.map { "\($0) of \(name)" } ?? name
            Logger.stderrSink(revoked ? "Logged out of \(what); the server revoked the tokens." : "Logged out of \(what).")
            return ""
        case .forget(let provider):
            let service = session.service
            let name = try session.provider(provider).displayName
            let revoked = try ToolSession.wait(timeout: session.requestTimeout) { () async throws(AuthError) in
                try await service.forget(provider: provider)
            }
            Logger.stderrSink("Forgot \(TerminalText.escaped(name)) (\(provider)): logged out\(revoked ? ", tokens revoked" : ""), registration deleted.")
            return ""
        case .login(let provider, let username, let passwordStdin, let tokenStdin, let flow):
            let options = TerminalLogin.Options(username: username, passwordStdin: passwordStdin, tokenStdin: tokenStdin, flow: flow)
            let result = try TerminalLogin.run(session, provider: provider, options: options)
            return TerminalLogin.loggedIn(result, session: session) + "\n"
        case .gitCredential(let operation):
            return try GitCredential.run(operation, session: session)
        case .kubectlCredential(let provider):
            return try KubectlCredential.run(provider, session: session, command: command)
        case .gitConfigure(let url):
            return try GitConfigure.run(url: url, session: session)
        case .config:
            return ""  // handled before the session is opened
        }
    }

    /// What `token --min-valid` says when the token it gives lives less than asked, in-process and
    /// through a socket agent alike; nil when it lives long enough.
    static func minValidNote(provider name: String, seconds: Int, expiresAt: String?, refreshed: Bool) -> String? {
        guard let until = expiresAt.flatMap(RFC3339.parse), until.timeIntervalSinceNow < Double(seconds) else { return nil }
        let left = max(0, Int(until.timeIntervalSinceNow))
        return refreshed
            ? "auth-agent: the token of \(name) is valid for \(left) s only, less than the \(seconds) s asked for, even after a refresh"
            : "auth-agent: the token of \(name) is valid for \(left) s, less than the \(seconds) s asked for, and this session cannot be refreshed"
    }

    /// `refresh P` of a session with nothing to refresh with (the core kept it: `refreshed: false`).
    static func notRefreshed(_ provider: String, name: String) -> ToolFailure {
        ToolFailure(.failed, "the session of \(name) cannot be refreshed (no refresh token); for a new token run: auth-agent login \(provider)")
    }

    /// `header URL [-X METHOD]`: the header lines that authorize a request to URL — `Authorization`,
    /// and `DPoP` (a proof for METHOD and URL) for a DPoP provider, so `curl -H @file` reads both; a
    /// failure when no provider covers it, so `h=$(auth-agent header "$URL")` stops a `set -e` script
    /// before an unsigned request.
    static func header(_ url: String, method: String, _ session: ToolSession) throws(ToolFailure) -> String {
        let decision = try ToolSession.wait(timeout: session.requestTimeout, nowOr: { () throws(AuthError) in
            try session.service.signNowOrWait(url: url, provider: nil, account: session.choice, shape: session.shape, method: method)
        })
        guard case .signed(let signature) = decision else {
            throw ToolFailure(.failed, "notCovered: no configured provider covers \(Origin(url: url)?.description ?? url) over https or loopback")
        }
        return signature.headers.map { "\($0): \($1)\n" }.joined()
    }
}
