import AuthCore
import Dispatch
import JSONRPC
import Locking
import Logging

/// The agent this process runs for itself when no socket agent answers: the configuration, its
/// store and the same `AuthService` the long-lived agent serves — so refreshes take the same
/// per-provider lock, re-read the store and check generations, and a terminal, git, kubectl and
/// editors share one login and one refresh token. The command line reaches it as every host
/// reaches an agent, through its methods (`connect`); the MCP bridge uses its service.
final class LocalAgent: Sendable {
    let config: AgentConfig
    /// Where the configuration was read from (or expected, when there is none).
    let configPath: String
    let service: AuthService
    let logger: Logger
    private let registry: MethodRegistry
    private let options: RPCConnection.Options
    private let subscriptions = Subscriptions()

    /// Loads the configuration and opens its store; a memory store cannot outlive this process,
    /// so a one-shot command refuses it (exit 2) rather than log in to nothing.
    /// `adjust`: what the command line sets for this process beside the file (`mcp --callback-port`).
    init(configPath: String?, logLevel: Logger.Level, adjust: (inout AgentConfig) -> Void = { _ in }) throws(ToolFailure) {
        // Log lines may quote servers (error descriptions, names): filtered like everything else shown.
        let logger = Logger(level: logLevel, sink: { Logger.stderrSink(TerminalText.escaped($0)) })
        var arguments = Arguments()
        arguments.configPath = configPath
        var (config, path) = Agent.loadConfig(arguments, logger: logger, hint: false)
        adjust(&config)
        if case .memory = config.store {
            throw ToolFailure(.usage, "\(path) sets store.kind \"memory\": a one-shot command's session would end with the process; "
                + "use the file store, or a socket agent that holds the memory store (auth-agent serve --socket, AUTH_AGENT_SOCK)")
        }
        let (store, storeStatus) = Agent.openStore(config, logger: logger)
        let subscriptions = self.subscriptions
        service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(), logger: logger,
                              lockTimeout: config.lockTimeoutSeconds, events: { subscriptions.deliver($0) })
        (registry, options) = Agent.methods(service)
        (self.config, self.configPath, self.logger) = (config, path, logger)
    }

    /// A new connection to this agent over the engine's in-memory transport, each line handled on
    /// the calling thread (`MemoryTransport.inline`: a one-shot command starts no reader thread).
    func connect() -> InlineHost {
        let (registry, options, logger, subscriptions) = (self.registry, self.options, self.logger, self.subscriptions)
        return MemoryTransport.inline { output, disconnect in
            RPCConnection(registry: registry, output: output, logger: logger, options: options,
                          session: AuthHost(subscriptions: subscriptions), onExit: { disconnect($0) })
        }
    }

    /// Seconds a token, refresh or logout may take: longer than the store lock and one HTTP call.
    var requestTimeout: Double { config.lockTimeoutSeconds + 30 }
}

/// Runs async work to its end from a thread that may block (the command line's main thread),
/// or gives up after `timeout` seconds (then 3, retry later); Ctrl-C cancels it and waits for it
/// to unwind (a lock released, a listener closed) before the process ends.
enum Blocking {
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
}
