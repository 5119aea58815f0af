import AuthCore
import Foundation
import JSONRPC

/// The agent's long-lived service wired as the executable wires it (configuration → store →
/// `AuthService` → the methods → `RPCConnection`), in this process, on an injected clock:
/// lines go in through the engine's framer and `handleLine`, and the lines it writes, and what
/// it logs, are kept here for the test to read. What it leaves out is the process around it —
/// stdin and stdout, signals, exit codes and the periodic store watch (it watches for other
/// processes, and a test of one agent has none) — which the tests of the built binary cover.
public final class InProcessAgent: @unchecked Sendable {
    /// Builds the protocol over the service: the executable's own wiring (`Agent.methods`).
    public typealias Methods = (AuthService, Subscriptions) -> (MethodRegistry, RPCConnection.Options)

    private let connection: RPCConnection
    /// Lives as long as the agent, as the executable's lives as long as the process.
    private let service: AuthService
    private var framer: LineFramer
    private let output = LineQueue()
    private let log = TestBox("")
    private let exitCode = TestBox<Int32?>(nil)

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
        service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(), clock: clock,
                              logger: logger, lockTimeout: config.lockTimeoutSeconds, events: { subscriptions.deliver($0) })
        let (registry, options) = methods(service, subscriptions)
        let output = self.output
        let sink = OutputSink(write: { bytes in output.append(bytes) }, onClosed: {})
        let service = self.service
        let exitCode = self.exitCode
        // As the executable's exit: a refresh the server may already have answered is waited for
        // and persisted first; then nothing more is written, as nothing is after a process ends.
        connection = RPCConnection(registry: registry, output: sink, logger: logger, options: options, onExit: { code in
            _ = service.finishRefreshes()
            exitCode.update { $0 = $0 ?? code }
        })
        framer = LineFramer(maxLineBytes: maxLineBytes)
    }

    /// What the agent logged so far (its stderr, had it been a process).
    public var stderr: String { log.get() }

    /// The code it ended with (end of input, `exit`), nil while it serves.
    public var exited: Int32? { exitCode.get() }

    /// Writes one line (a newline is added), as a host writes to the agent's stdin.
    public func send(_ line: Data) throws {
        guard exited == nil else { throw Gone() }
        feed(line + [0x0A])
    }

    /// The next line the agent wrote; nil after `timeout` seconds, or once it has ended and everything was read.
    public func nextLine(timeout: Double) -> Data? { output.next(timeout: timeout) }

    /// End of input: the last partial line is handled, requests in flight get their grace, and the agent ends
    /// with code 0, as the executable does. Returns once it has.
    public func closeInput() {
        if exited == nil {
            framer.finish(handle)
            connection.output.flush()
            connection.finish()
        }
        end()
    }

    /// After the agent ended: no answer may be written any more, and no request left running.
    private func end() {
        connection.output.close()
        connection.cancelInFlight()
        output.end()
    }

    private func feed(_ bytes: Data) {
        bytes.withUnsafeBytes { raw in framer.feed(raw.bindMemory(to: UInt8.self), handle) }
        connection.output.flush()
        // An `exit` notification ended it while its line was handled.
        if exited != nil { end() }
    }

    private func handle(_ event: LineFramer.Event) {
        switch event {
        case .line(let line): connection.handleLine(line)
        case .oversized: connection.handleOversizedLine(limit: framer.maxLineBytes)
        }
    }

    /// A line sent after the agent ended.
    public struct Gone: Error, CustomStringConvertible {
        public var description: String { "the agent has ended; a line could not be written" }
    }
}

/// The agent's output as lines, for one reader that waits for them.
final class LineQueue: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [Data] = []
    private var partial = Data()
    private var ended = false

    /// Takes what the agent's sink writes (whole lines, usually several); always accepted.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        condition.withLock {
            guard !ended else { return }
            partial.append(contentsOf: bytes)
            while let newline = partial.firstIndex(of: 0x0A) {
                lines.append(Data(partial[partial.startIndex..<newline]))
                partial = Data(partial[(newline + 1)...])
            }
            condition.broadcast()
        }
        return true
    }

    func end() {
        condition.withLock {
            ended = true
            condition.broadcast()
        }
    }

    func next(timeout: Double) -> Data? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while lines.isEmpty && !ended {
                if !condition.wait(until: deadline) { break }
            }
            return lines.isEmpty ? nil : lines.removeFirst()
        }
    }
}
