import Foundation
import XCTest

/// The built `auth-agent` binary running as a child process, spoken to over pipes
/// exactly as a host would.
final class AgentProcess: @unchecked Sendable {
    static var binaryURL: URL {
        if let override = ProcessInfo.processInfo.environment["AUTH_AGENT_BIN"] {
            return URL(fileURLWithPath: override)
        }
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            return bundle.bundleURL.deletingLastPathComponent().appendingPathComponent("auth-agent")
        }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("auth-agent")
    }

    let process = Process()
    private let stdinPipe = Pipe()
    private let stdoutPipe = Pipe()
    private let stderrPipe = Pipe()
    private let lock = NSCondition()
    private var lines: [Data] = []
    private var partial = Data()
    private var stdoutClosed = false
    private var stderrData = Data()
    private var stdoutReader: PipeReader?
    private var stderrReader: PipeReader?
    private var stdinClosed = false

    /// A write to an agent that has exited must fail that test, not kill the test
    /// runner with SIGPIPE (which ends every remaining test with no report). A no-op
    /// handler rather than SIG_IGN: handlers reset to the default on exec, so the
    /// programs the tests spawn (agents, shells, client suites) keep the usual SIGPIPE.
    private static let ignoreBrokenPipes: Void = { signal(SIGPIPE) { _ in } }()

    /// Why a line could not be written: the agent is gone; says how it ended and what it said.
    struct AgentGone: Error, CustomStringConvertible {
        let description: String
    }

    /// - Parameters:
    ///   - readsOutput: false plays a host that stopped reading stdout; `startReadingOutput()` resumes.
    ///   - nonBlockingInput, nonBlockingOutput: the agent's stdin or stdout is a non-blocking pipe, as some hosts hand them over.
    init(arguments: [String], environment: [String: String] = [:], readsOutput: Bool = true,
         nonBlockingInput: Bool = false, nonBlockingOutput: Bool = false) throws {
        Self.ignoreBrokenPipes
        process.executableURL = Self.binaryURL
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        // Tests run over SSH without a display would see no browser opened (and `status` say
        // `paste`): the agent behaves as on a desktop unless a test sets SSH_CONNECTION itself.
        env["SSH_CONNECTION"] = nil
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardInput = stdinPipe
        process.standardOutput = stdoutPipe
        process.standardError = stderrPipe
        for (fd, nonBlocking) in [(stdinPipe.fileHandleForReading.fileDescriptor, nonBlockingInput),
                                  (stdoutPipe.fileHandleForWriting.fileDescriptor, nonBlockingOutput)] where nonBlocking {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        if readsOutput { startReadingOutput() }
        stderrReader = PipeReader(stderrPipe.fileHandleForReading, onData: { [weak self] data in
            guard let self else { return }
            self.lock.lock()
            self.stderrData.append(data)
            self.lock.unlock()
        })
        try process.run()
    }

    func startReadingOutput() {
        lock.lock()
        defer { lock.unlock() }
        guard stdoutReader == nil else { return }
        stdoutReader = PipeReader(stdoutPipe.fileHandleForReading, onData: { [weak self] in self?.receive($0) },
                                  onEnd: { [weak self] in self?.receive(Data()) })
    }

    /// How many bytes the agent wrote that nobody has read yet.
    var unreadOutputBytes: Int { Self.unreadBytes(stdoutPipe) }

    private static func unreadBytes(_ pipe: Pipe) -> Int {
        var n: Int32 = 0
        let fd = pipe.fileHandleForReading.fileDescriptor
        return withUnsafeMutablePointer(to: &n) { ioctl(fd, UInt(FIONREAD), $0) } == 0 ? Int(n) : 0
    }

    /// Waits (bounded) until everything an agent that has exited wrote to stderr is in `stderr`: the
    /// exit can be seen before the reading thread got the last of it.
    private func awaitStderr(timeout: Double) {
        stderrReader?.awaitEnd(timeout: timeout)
    }

    private func receive(_ data: Data) {
        lock.lock()
        defer { lock.unlock(); lock.broadcast() }
        if data.isEmpty {
            if stdoutClosed { return }
            stdoutClosed = true
            if !partial.isEmpty { lines.append(partial); partial = Data() }
            return
        }
        partial.append(data)
        while let nl = partial.firstIndex(of: 0x0A) {
            lines.append(partial[partial.startIndex..<nl])
            partial = Data(partial[(nl + 1)...])
        }
    }

    func send(_ bytes: Data) throws {
        var line = bytes
        line.append(0x0A)
        do {
            try stdinPipe.fileHandleForWriting.write(contentsOf: line)
        } catch {
            let status = waitForExit(timeout: 2).map { "exited with status \($0)" } ?? "closed its input"
            throw AgentGone(description: "the agent \(status) before a line could be written (\(error)); its stderr:\n\(stderr)")
        }
    }

    func send(_ text: String) throws { try send(Data(text.utf8)) }

    /// The next line the agent wrote, or nil after `timeout` seconds / at end of output.
    func nextLine(timeout: Double) -> Data? {
        let deadline = Date().addingTimeInterval(timeout)
        lock.lock()
        defer { lock.unlock() }
        while lines.isEmpty && !stdoutClosed {
            if !lock.wait(until: deadline) { break }
        }
        return lines.isEmpty ? nil : lines.removeFirst()
    }

    func closeInput() {
        lock.lock()
        let already = stdinClosed
        stdinClosed = true
        lock.unlock()
        if !already { try? stdinPipe.fileHandleForWriting.close() }
    }

    /// Waits for the process to end; nil if it is still running after `timeout`. Once it has
    /// ended, `stderr` holds all it wrote.
    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(5_000) }
        if process.isRunning { return nil }
        awaitStderr(timeout: 2)
        StderrAudit.check(stderr, from: "auth-agent " + (process.arguments ?? []).joined(separator: " "))
        return process.terminationStatus
    }

    var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: stderrData, as: UTF8.self)
    }

    func kill() {
        if process.isRunning { process.terminate() }
    }

    /// Also stops the readers and closes the pipes: without this every agent left three descriptors
    /// open, ~1,350 by the multi-agent tests, where Foundation's `Process.run` crashed reading
    /// /proc/self/fd (the over-read of swift-corelibs-foundation#5472). Each reader closes its own
    /// copy of its pipe, so closing the originals here cannot pull a descriptor from under a read.
    deinit {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        stdoutReader?.stop()
        stderrReader?.stop()
        try? stdoutPipe.fileHandleForReading.close()
        try? stderrPipe.fileHandleForReading.close()
        if !stdinClosed { try? stdinPipe.fileHandleForWriting.close() }
    }
}
