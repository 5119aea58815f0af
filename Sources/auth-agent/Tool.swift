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
/// to stdout, everything for people to stderr. Every command is the protocol's calls to an agent
/// (`AgentLink`: the socket agent, or this process's own), written once here and in the files
/// of the commands that need more (`TerminalLogin`, `FetchCommand`, `GitCredential`, `KubectlCredential`).
enum Tool {
    static func run(_ command: ToolCommand) -> Never {
        // Only a login may wait on the user; for the rest Ctrl-C's default (end now) loses nothing,
        // as the store is only ever written whole, and start-up skips the signal source.
        if command.mayLogIn { Interrupt.install() }
        var opened: AgentLink?
        do {
            let output = try perform(command) { opened = $0 }
            if !output.isEmpty { StandardStream.write(Array(output.utf8)) }
            opened?.finish()
            exit(0)
        } catch {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(advice(error, command: command, link: opened)))")
            exit(error.code.rawValue)
        }
    }

    /// The failure's message with what to do next: how to start when nothing is configured, and
    /// `run: auth-agent login P` when nobody is logged in (as git-credential and kubectl-credential say).
    static func advice(_ failure: ToolFailure, command: ToolCommand, link: AgentLink?) -> String {
        if failure.authCode == .unknownProvider, let local = link?.local, local.config.providers.isEmpty {
            return ConfigCommand.noConfiguration(local.configPath)
        }
        switch command.action {
        case .token, .refresh, .header, .fetch:
            if failure.needsLogin, let provider = failure.provider { return "\(failure.message) run: auth-agent login \(provider)" }
        default: break
        }
        return failure.message
    }

    /// What the command prints on stdout when it succeeds.
    static func perform(_ command: ToolCommand, opened: (AgentLink) -> Void = { _ in }) throws(ToolFailure) -> String {
        // Configuration commands work on the file itself: no agent, and a missing or broken file is their business.
        switch command.action {
        case .config(let action): return try ConfigCommand.run(action, command: command)
        case .gitConfigure(let url): return try GitConfigure.run(url: url, configPath: command.configPath)
        case .clientMetadata(let url): return try ClientMetadataCommand.document(for: url) + "\n"
        case .setup(let fromLogin):
            // A script's `login` without a provider is the usage mistake it always was; a person's starts the questions.
            if fromLogin && isatty(0) == 0 { throw ToolFailure(.usage, "'login' needs exactly one PROVIDER (or, at a terminal, none: it asks)") }
            return try Setup.run(command) + "\n"
        default: break
        }
        let shape = try shape(of: command)
        let link = try AgentLink.open(configPath: command.configPath, logLevel: command.logLevel)
        opened(link)
        let account = command.account
        switch command.action {
        case .status(let json):
            let status = try link.call(StatusMethod.self, ())
            // Learned APIs count: a first run that learned one has something to show.
            if let local = link.local, status.providers.isEmpty { Logger.stderrSink("auth-agent: " + ConfigCommand.noConfiguration(local.configPath)) }
            return json ? JSONSerializer.string(status.json) + "\n" : StatusTable.render(status.json, store: status.storeKind ?? "-")
        case .token(let provider, let json):
            // `bearer`: printed, the token is used without a proof, so the core refuses a DPoP provider's.
            let token = try link.call(TokenMethod.self, .init(provider: provider, account: account, shape: shape, bearer: true, minValidSeconds: command.minValid))
            if let seconds = command.minValid, let until = token.expiresAt, until.timeIntervalSinceNow < Double(seconds) {
                Logger.stderrSink(minValidNote(provider: TerminalText.escaped(try entry(provider, link).displayName), seconds: seconds, until: until,
                                               refreshed: token.refreshed))
            }
            guard json else { return token.accessToken + "\n" }
            return JSONSerializer.string(["accessToken": .string(token.accessToken), "tokenType": .string(token.tokenType),
                                          "expiresAt": token.expiresAt.map { .string(RFC3339.format($0)) } ?? .null]) + "\n"
        case .header(let url, let method, let json):
            let signed = try link.call(SignMethod.self, .init(method: method, url: url, account: account, shape: shape))
            guard let authorization = signed.authorization else {
                let origin = Origin(url: url)?.description ?? url
                throw ToolFailure(.failed, "notCovered: no configured provider covers \(origin) over https or loopback; "
                    + "to sign it, add \(origin) to a provider's origins, or learn the API from its 401 with: auth-agent login \(url)")
            }
            guard json else { return "Authorization: \(authorization)\n" + (signed.proof.map { "DPoP: \($0)\n" } ?? "") }
            var headers: JSONObject = ["Authorization": .string(authorization)]
            if let proof = signed.proof { headers["DPoP"] = .string(proof) }
            return JSONSerializer.string(.object(headers)) + "\n"
        case .fetch(let options):
            return try FetchCommand.run(options, account: account, shape: shape, link: link)
        case .refresh(let provider):
            let result = try link.call(RefreshMethod.self, .init(provider: provider, account: account))
            let name = TerminalText.escaped(try entry(provider, link).displayName)
            guard result.refreshed else {
                throw ToolFailure(.failed, "the session of \(name) cannot be refreshed (no refresh token); for a new token run: auth-agent login \(provider)")
            }
            Logger.stderrSink("Refreshed the token of \(name)\(result.expiresAt.map { " (token valid until \(RFC3339.format($0)))" } ?? "").")
            return ""
        case .logout(let provider):
            let entry = try entry(provider, link)
            let name = TerminalText.escaped(entry.displayName)
            // Saying "logged out" when nobody was would hide a typo in --account, or a login made with another store.
            let nobody = command.all ? entry.accounts.isEmpty
                : account.map { wanted in !entry.accounts.contains { AccountNames.matches(wanted, account: $0.id, user: $0.user) } } ?? !entry.loggedIn
            if nobody {
                Logger.stderrSink(account.map { "Account \($0) is not logged in to \(name)." } ?? "Nobody is logged in to \(name).")
                return ""
            }
            let revoked = try link.call(LogoutMethod.self, .init(provider: provider, account: account, all: command.all))
            let what = command.all ? "every account of \(name)" : account.map { "\($0) of \(name)" } ?? name
            Logger.stderrSink(revoked ? "Logged out of \(what); the server revoked the tokens." : "Logged out of \(what).")
            return ""
        case .forget(let provider):
            let name = TerminalText.escaped(try entry(provider, link).displayName)
            let revoked = try link.call(ForgetMethod.self, provider)
            Logger.stderrSink("Forgot \(name) (\(provider)): logged out\(revoked ? ", tokens revoked" : ""), registration deleted.")
            return ""
        case .login(let provider, let username, let passwordStdin, let tokenStdin, let flow, let name):
            let options = TerminalLogin.Options(username: username, passwordStdin: passwordStdin, tokenStdin: tokenStdin, flow: flow, name: name)
            return try TerminalLogin.login(provider, options, link: link) + "\n"
        case .gitCredential(let operation):
            return try GitCredential.run(operation, account: account, link: link)
        case .kubectlCredential(let provider):
            return try KubectlCredential.run(provider, account: account, shape: shape, link: link)
        case .config, .gitConfigure, .clientMetadata, .setup:
            return ""  // answered above
        }
    }

    /// The provider's entry in the agent's `status`; 1002, in the agent's own words, when it has none.
    static func entry(_ id: String, _ link: AgentLink) throws(ToolFailure) -> StatusMethod.Result.Provider {
        let status = try link.call(StatusMethod.self, ())
        guard let entry = status.provider(id) else {
            throw ToolFailure(AuthError.unknownProvider(id, .notConfigured(known: status.providers.map(\.id))))
        }
        return entry
    }

    /// What `token --min-valid` says when the token it gives lives less than asked.
    static func minValidNote(provider name: String, seconds: Int, until: Date, refreshed: Bool) -> String {
        let left = max(0, Int(until.timeIntervalSinceNow))
        return refreshed
            ? "auth-agent: the token of \(name) is valid for \(left) s only, less than the \(seconds) s asked for, even after a refresh"
            : "auth-agent: the token of \(name) is valid for \(left) s, less than the \(seconds) s asked for, and this session cannot be refreshed"
    }

    /// The shape `--scope`, `--audience` and `--resource` ask for, checked as the protocol checks
    /// its `scopes`, `audience` and `resource` (exit 2 otherwise); nil when none is given.
    static func shape(of command: ToolCommand) throws(ToolFailure) -> TokenShape? {
        if command.scopes.isEmpty && command.audience == nil && command.resource == nil { return nil }
        if let problem = TokenShape.problem(scopes: command.scopes, audience: command.audience, resource: command.resource, naming: { part in
            switch part {
            case .scope: return "--scope"
            case .audience: return "--audience"
            case .resource: return "--resource"
            }
        }) {
            throw ToolFailure(.usage, problem)
        }
        return TokenShape(scopes: command.scopes, audience: command.audience, resource: command.resource)
    }
}
