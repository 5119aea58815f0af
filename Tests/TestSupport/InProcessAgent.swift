import AuthCore
import Foundation
import JSONRPC
import Locking
import Logging

/// The agent's long-lived service wired as the executable wires it (configuration → store →
/// `AuthService` → the methods → an `RPCConnection` with an `AuthHost`), in this process, on an
/// injected clock, over the engine's in-memory transport (`MemoryTransport`): the lines it
/// writes, and what it logs, are kept for the test to read. What it leaves out is the process
/// around it — stdin and stdout, signals, exit codes and the periodic store watch (it watches
/// for other processes, and a test of one agent has none) — which the tests of the built binary cover.
public final class InProcessAgent: @unchecked Sendable {
    /// Builds the protocol over the service: the executable's own wiring (`Agent.methods`).
    public typealias Methods = (AuthService) -> (MethodRegistry, RPCConnection.Options)

    private let host: MemoryHost
    /// Lives as long as the agent, as the executable's lives as long as the process.
    private let service: AuthService
    private let log = TestBox("")
    private let exitCode = TestBox<Int32?>(nil)
    private let ended = ThreadWait()

    /// - Parameters:
    ///   - environment: where the store lives (`XDG_STATE_HOME`), as the executable reads it from its own.
    ///   - logLevel, maxLineBytes: the executable's (`--log-level`, `--max-message-bytes`).
    ///   - warnings: what the executable warns of before it serves (no configuration file yet).
    public init(config: AgentConfig, environment: [String: String], clock: Clock, logLevel: Logger.Level, maxLineBytes: Int,
                methods: Methods, warnings: [String] = []) throws
    {
        let log = self.log
        let logger = Logger(level: logLevel, sink: { line in log.update { $0 += line + "\n" } })
        warnings.forEach { logger.warn($0) }
        let (store, storeStatus) = try StoreOpening.open(config.store, providers: config.providers, environment: environment,
                                                         lockTimeout: config.lockTimeoutSeconds, warn: { logger.warn($0) })
        let subscriptions = Subscriptions()
        let service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(), clock: clock,
                                  logger: logger, lockTimeout: config.lockTimeoutSeconds, events: { subscriptions.deliver($0) })
        self.service = service
        let (registry, options) = methods(service)
        let (exitCode, ended) = (self.exitCode, self.ended)
        host = MemoryTransport.serve(maxLineBytes: maxLineBytes) { output, disconnect in
            // As the executable's exit: a refresh the server may already have answered is waited for
            // and persisted first; then nothing more is written, as nothing is after a process ends.
            RPCConnection(registry: registry, output: output, logger: logger, options: options,
                          session: AuthHost(subscriptions: subscriptions), onExit: { code in
                              _ = service.finishRefreshes()
                              exitCode.update { $0 = $0 ?? code }
                              disconnect(code)
                              ended.wake()
                          })
        }
    }

    /// What the agent logged so far (its stderr, had it been a process).
    public var stderr: String { log.get() }

    /// The code it ended with (end of input, `exit`), nil while it serves.
    public var exited: Int32? { exitCode.get() }

    /// Writes one line (a newline is added), as a host writes to the agent's stdin.
    public func send(_ line: Data) throws {
        guard exited == nil, host.write(Array(line) + [0x0A]) else { throw Gone() }
    }

    /// The next line the agent wrote; nil after `timeout` seconds, or once it has ended and everything was read.
    public func nextLine(timeout: Double) -> Data? { host.readLine(timeout: timeout).map { Data($0.utf8) } }

    /// End of input: the last partial line is handled, requests in flight get their grace, and the agent ends
    /// with code 0, as the executable does. Returns once it has (bounded by the engine's grace).
    public func closeInput() {
        host.closeInput()
        _ = ended.wait(timeout: 30) { exited }
    }

    /// A line sent after the agent ended.
    public struct Gone: Error, CustomStringConvertible {
        public var description: String { "the agent has ended; a line could not be written" }
    }
}
