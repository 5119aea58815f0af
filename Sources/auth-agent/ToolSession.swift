import AuthCore
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking
import Logging

/// What every one-shot subcommand works on: the same `AuthService` over the same store as the
/// long-lived agent, so refreshes take the same per-provider lock, re-read the store and check
/// generations — a terminal, git, kubectl and editors share one login and one refresh token.
struct ToolSession {
    let config: AgentConfig
    /// Where the configuration was read from (or expected, when there is none).
    let configPath: String
    let service: AuthService
    let store: SessionStore
    let logger: Logger
    let command: ToolCommand

    /// Loads the configuration and opens its store; a memory store cannot outlive this process,
    /// so a one-shot command refuses it (exit 2) rather than log in to nothing.
    static func open(_ command: ToolCommand) throws(ToolFailure) -> ToolSession {
        _ = try shape(of: command)
        // Log lines may quote servers (error descriptions, names): filtered like everything else shown.
        let logger = Logger(level: command.logLevel, sink: { Logger.stderrSink(TerminalText.escaped($0)) })
        var arguments = Arguments()
        arguments.configPath = command.configPath
        let (config, path) = Agent.loadConfig(arguments, logger: logger, hint: false)
        if case .memory = config.store {
            throw ToolFailure(.usage, "\(path) sets store.kind \"memory\": a one-shot command's session would end with the process; "
                + "use the file store, or a socket agent that holds the memory store (auth-agent serve --socket, AUTH_AGENT_SOCK)")
        }
        let (store, storeStatus) = Agent.openStore(config, logger: logger)
        let service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(), logger: logger,
                                  lockTimeout: config.lockTimeoutSeconds, events: { _ in })
        return ToolSession(config: config, configPath: path, service: service, store: store, logger: logger, command: command)
    }

    /// Runs one of the service's operations to its end, or gives up after `timeout` seconds (then 3, retry later).
    static func wait<T: Sendable>(timeout: Double, _ operation: @escaping @Sendable () async throws(AuthError) -> T) throws(ToolFailure) -> T {
        let outcome = Locked<Result<T, ToolFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Signalled too, for the Ctrl-C handler, which must not take `done` from the main thread.
        let unwound = DispatchSemaphore(value: 0)
        let task = Task {
            defer { done.signal(); unwound.signal() }
            let result: Result<T, ToolFailure>
            do throws(AuthError) {
                result = .success(try await operation())
            } catch {
                result = .failure(ToolFailure(error))
            }
            outcome.withLock { $0 = result }
        }
        Interrupt.onInterrupt { task.cancel(); _ = unwound.wait(timeout: .now() + 2) }
        defer { Interrupt.onInterrupt(nil) }
        let finished = done.wait(timeout: .now() + timeout) == .success
        Interrupt.yieldIfInterrupted()
        guard finished else {
            task.cancel()
            throw ToolFailure(.unavailable, "authServerUnavailable: no answer within \(Int(timeout)) s")
        }
        return try outcome.current!.get()
    }

    /// The answer now when `answer` has one, else its operation's, waited for as above.
    static func wait<T: Sendable>(timeout: Double, nowOr answer: () throws(AuthError) -> NowOrWait<T>) throws(ToolFailure) -> T {
        let decided: NowOrWait<T>
        do { decided = try answer() } catch { throw ToolFailure(error) }
        switch decided {
        case .now(let value): return value
        case .wait(let operation): return try wait(timeout: timeout, operation)
        }
    }

    /// Seconds a token, refresh or logout may take: longer than the store lock and one HTTP call.
    var requestTimeout: Double { config.lockTimeoutSeconds + 30 }

    func provider(_ id: String) throws(ToolFailure) -> ProviderConfig {
        guard let p = config.providers.first(where: { $0.id == id }) ?? service.providerConfig(id) else {
            if config.providers.isEmpty { throw ToolFailure(.usage, ConfigCommand.noConfiguration(configPath)) }
            throw ToolFailure(AuthError.unknownProvider(id, .notConfigured(known: config.providers.map(\.id))))
        }
        return p
    }

    /// The account and token shape the command line asked for (`--account`, `--scope`, `--audience`, `--resource`).
    var choice: AccountChoice { AccountChoice(account: command.account) }
    var shape: TokenShape? { try? Self.shape(of: command) }

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

    /// `token`: the access token, expiry and type, refreshed first when needed, for use as a
    /// bearer (`TokenUse.bearer`: refused for a DPoP provider) — git-credential and
    /// kubectl-credential, which come here too, fail loudly rather than hand it out.
    /// - Parameter shape: the shape the URL's origin is configured with (the helpers); the command line's wins.
    func token(_ provider: String, account: AccountChoice? = nil, shape: TokenShape? = nil) throws(ToolFailure) -> (token: String, type: String, expiresAt: String?) {
        let choice = account ?? self.choice
        let shape = self.shape ?? shape ?? .none
        let result = try Self.wait(timeout: requestTimeout, nowOr: { () throws(AuthError) in
            try service.tokenNowOrWait(provider: provider, account: choice, shape: shape, use: .bearer)
        })
        return (result.accessToken, result.tokenType, result.expiresAt.map(RFC3339.format))
    }

    /// `token --min-valid`: the core's `token` with `validFor` (refreshed first unless valid that
    /// long, and only when the session can be refreshed), said as `Tool.minValidNote` says it.
    func token(_ provider: String, validFor seconds: Int?) throws(ToolFailure) -> (token: String, type: String, expiresAt: String?) {
        guard let seconds else { return try token(provider) }
        let (service, choice, shape) = (self.service, self.choice, self.shape ?? .none)
        let result = try Self.wait(timeout: requestTimeout) { () async throws(AuthError) in
            try await service.token(provider: provider, account: choice, shape: shape, use: .bearer, validFor: Double(seconds))
        }
        let expiresAt = result.expiresAt.map(RFC3339.format)
        Tool.minValidNote(provider: try self.provider(provider).displayName, seconds: seconds, expiresAt: expiresAt, refreshed: result.refreshed).map(Logger.stderrSink)
        return (result.accessToken, result.tokenType, expiresAt)
    }

    /// `refresh`: a new token now; refused, the session kept, when it cannot be refreshed (`Tool.notRefreshed`).
    func refresh(_ provider: String) throws(ToolFailure) -> RefreshResult {
        let service = self.service
        let choice = self.choice
        let result = try Self.wait(timeout: requestTimeout) { () async throws(AuthError) in
            try await service.refresh(provider: provider, account: choice, failedAuthorization: nil)
        }
        guard result.refreshed else { throw Tool.notRefreshed(provider, name: try self.provider(provider).displayName) }
        return result
    }
}
