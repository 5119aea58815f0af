import AuthCore
import Foundation
import JSON
import JSONRPC

/// What every one-shot subcommand works on: the same `AuthService` over the same store as the
/// long-lived agent, so refreshes take the same per-provider lock, re-read the store and check
/// generations — a terminal, git, kubectl and editors share one login and one refresh token.
struct ToolSession {
    let config: AgentConfig
    let service: AuthService
    let store: SessionStore
    let logger: Logger

    /// Loads the configuration and opens its store; a memory store cannot outlive this process,
    /// so a one-shot command refuses it (exit 2) rather than log in to nothing.
    static func open(_ command: ToolCommand) throws(ToolFailure) -> ToolSession {
        let logger = Logger(level: command.logLevel)
        var arguments = Arguments()
        arguments.configPath = command.configPath
        let (config, path) = Agent.loadConfig(arguments, logger: logger)
        if case .memory = config.store {
            throw ToolFailure(.usage, "\(path) sets store.kind \"memory\": a one-shot command's session would end with the process; use the file store")
        }
        let store = Agent.openStore(config, logger: logger)
        let service = AuthService(config: config, store: store, transport: SystemHTTPTransport(), logger: logger,
                                  lockTimeout: config.lockTimeoutSeconds, events: { _ in })
        return ToolSession(config: config, service: service, store: store, logger: logger)
    }

    /// Runs the service's work to its end, or gives up after `timeout` seconds (then 3, retry later).
    static func wait(_ work: AuthService.Work, timeout: Double) throws(ToolFailure) -> JSONValue {
        let outcome = Locked<Result<JSONValue, ToolFailure>?>(nil)
        let done = DispatchSemaphore(value: 0)
        // Signalled too, for the Ctrl-C handler, which must not take `done` from the main thread.
        let unwound = DispatchSemaphore(value: 0)
        let task = Task {
            defer { done.signal(); unwound.signal() }
            let result: Result<JSONValue, ToolFailure>
            do {
                result = .success(try await work.run())
            } catch let error as AuthError {
                result = .failure(ToolFailure(error))
            } catch {
                result = .failure(ToolFailure(.failed, "\(error)"))
            }
            work.answered()
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

    /// `wait` for a step that is ready at once (a fresh token, straight from the store) or needs work.
    static func wait(_ step: AuthService.Step, timeout: Double) throws(ToolFailure) -> JSONValue {
        switch step {
        case .ready(let text):
            do { return try JSONParser.parse(text.bytes) } catch { throw ToolFailure(.failed, "\(error)") }
        case .wait(let work): return try wait(work, timeout: timeout)
        }
    }

    /// Seconds a token, refresh or logout may take: longer than the store lock and one HTTP call.
    var requestTimeout: Double { config.lockTimeoutSeconds + 30 }

    func provider(_ id: String) throws(ToolFailure) -> ProviderConfig {
        guard let p = config.providers.first(where: { $0.id == id }) else {
            throw ToolFailure(AuthError(.unknownProvider, "No provider \"\(id)\" is configured; known: \(config.providers.map(\.id).joined(separator: ", ")).", provider: id))
        }
        return p
    }

    /// `token`: the access token, expiry and type, refreshed first when needed.
    func token(_ provider: String) throws(ToolFailure) -> (token: String, type: String, expiresAt: String?) {
        let work: AuthService.Work
        do { work = try service.beginToken(provider: provider) } catch { throw ToolFailure(error) }
        let result = try Self.wait(work, timeout: requestTimeout)
        guard let token = result["accessToken"]?.stringValue else { throw ToolFailure(.failed, "the token answer has no accessToken") }
        return (token, result["tokenType"]?.stringValue ?? "Bearer", result["expiresAt"]?.stringValue)
    }
}
