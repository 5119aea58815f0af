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
            Logger.stderrSink("auth-agent: \(error.message)")
            exit(error.code.rawValue)
        }
    }

    /// What the command prints on stdout when it succeeds.
    static func perform(_ command: ToolCommand, opened: (ToolSession) -> Void = { _ in }) throws(ToolFailure) -> String {
        let session = try ToolSession.open(command)
        opened(session)
        switch command.action {
        case .status(let json):
            let status = AuthMethods.statusResult(session.service.status(), store: session.service.storeStatus)
            return json ? JSONSerializer.string(status) + "\n" : StatusTable.render(status, store: session.service.storeStatus?.kind.rawValue ?? "-")
        case .token(let provider, let json):
            let token = try session.token(provider)
            guard json else { return token.token + "\n" }
            return JSONSerializer.string(["accessToken": .string(token.token), "tokenType": .string(token.type),
                                          "expiresAt": token.expiresAt.map { .string($0) } ?? .null]) + "\n"
        case .header(let url, let method):
            return try header(url, method: method, session)
        case .fetch(let options):
            return try FetchCommand.run(options, session: session)
        case .logout(let provider):
            let service = session.service
            let (choice, all) = (session.choice, command.all)
            let revoked = try ToolSession.wait(timeout: session.requestTimeout) { () async throws(AuthError) in
                try await service.logout(provider: provider, account: choice, all: all)
            }
            let what = all ? "every account of \(provider)" : command.account.map { "\($0) of \(provider)" } ?? provider
            Logger.stderrSink(revoked ? "Logged out of \(what); the server revoked the tokens." : "Logged out of \(what).")
            return ""
        case .login(let provider, let username, let passwordStdin, let tokenStdin, let flow):
            let options = TerminalLogin.Options(username: username, passwordStdin: passwordStdin, tokenStdin: tokenStdin, flow: flow)
            let result = try TerminalLogin.run(session, provider: provider, options: options)
            return TerminalLogin.loggedIn(result, session: session) + "\n"
        case .gitCredential(let operation):
            return try GitCredential.run(operation, session: session)
        case .kubectlCredential(let provider):
            return try KubectlCredential.run(provider, session: session, command: command)
        }
    }

    /// `header URL [-X METHOD]`: the header lines that authorize a request to URL — `Authorization`,
    /// and `DPoP` (a proof for METHOD and URL) for a DPoP provider, so `curl -H @file` reads both; a
    /// failure when no provider covers it, so `h=$(auth-agent header "$URL")` stops a `set -e` script
    /// before an unsigned request.
    static func header(_ url: String, method: String, _ session: ToolSession) throws(ToolFailure) -> String {
        let service = session.service
        var decision: SignDecision?
        let (choice, shape) = (session.choice, session.shape)
        do { decision = try service.signNow(url: url, provider: nil, account: choice, shape: shape, method: method) } catch { throw ToolFailure(error) }
        if decision == nil {
            decision = try ToolSession.wait(timeout: session.requestTimeout) { () async throws(AuthError) in
                try await service.sign(url: url, provider: nil, account: choice, shape: shape, method: method)
            }
        }
        guard case .signed(let signature)? = decision else {
            throw ToolFailure(.failed, "notCovered: no configured provider covers \(Origin(url: url)?.description ?? url) over https or loopback")
        }
        return "Authorization: \(signature.authorization)\n" + (signature.proof.map { "DPoP: \($0)\n" } ?? "")
    }
}
