@testable import auth_agent
import AuthCore
import Foundation
import TestSupport

/// The agent a transcript talks to: the built binary (`AgentProcess`) or the same wiring in
/// this process (`InProcessAgent`), on a clock that `!advance` moves.
protocol TranscriptAgent: AnyObject {
    var stderr: String { get }
    func send(_ bytes: Data) throws
    /// The next line the agent wrote; nil after `timeout` seconds, or at the end of its output.
    func nextLine(timeout: Double) -> Data?
    func closeInput()
    /// Its exit code once it has ended; nil if it still runs after `timeout` seconds.
    func waitForExit(timeout: Double) -> Int32?
    /// Ends it however it is, after a failure.
    func kill()
}

extension AgentProcess: TranscriptAgent {}

extension InProcessAgent: TranscriptAgent {
    /// Starts the agent the executable would run with `arguments` and `environment`: the same
    /// parsing of the command line, the same configuration file, the same store.
    static func start(arguments: [String], environment: [String: String], clock: VirtualClock) throws -> InProcessAgent {
        let parsed = try Arguments.parse(arguments)
        let path = AgentConfig.resolvePath(argument: parsed.configPath, environment: environment)
        // As `Agent.loadConfig`: no file is a first run, said on stderr (a file named but missing,
        // or invalid, ends the executable with code 2: those transcripts play against it).
        var config = AgentConfig()
        var warnings: [String] = []
        if FileManager.default.fileExists(atPath: path) {
            config = try AgentConfig.load(path: path)
        } else {
            warnings.append(ConfigCommand.noConfiguration(path) + " Serving no providers.")
        }
        return try InProcessAgent(config: config, environment: environment, clock: clock, logLevel: parsed.logLevel,
                                  maxLineBytes: parsed.maxMessageBytes, methods: Agent.methods, warnings: warnings)
    }

    /// `closeInput` has already waited for the end.
    func waitForExit(timeout: Double) -> Int32? { exited }

    func kill() { closeInput() }
}
