import Foundation
import JSON
import JSONRPC
import XCTest

/// `auth-agent serve --socket PATH` running beside a test, with its stderr collected.
final class SocketAgentProcess {
    let process = Process()
    let path: String
    private let errors: CLIHarness.Collected

    /// Starts the agent and waits until its socket answers a connection. `ulimit` runs it under
    /// the shell's `ulimit` with those options first (e.g. `["-n", "256"]`: both descriptor limits).
    init(path: String, arguments: [String] = [], environment: [String: String], ulimit: [String]? = nil) throws {
        self.path = path
        if let ulimit {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "ulimit \(ulimit.joined(separator: " ")) && exec \"$0\" \"$@\"", AgentProcess.binaryURL.path, "serve", "--socket", path] + arguments
        } else {
            process.executableURL = AgentProcess.binaryURL
            process.arguments = ["serve", "--socket", path] + arguments
        }
        // As in AgentProcess: a desktop's agent unless the test sets SSH_CONNECTION itself.
        process.environment = ProcessInfo.processInfo.environment.merging(["SSH_CONNECTION": ""]) { $1 }.merging(environment) { $1 }
        let err = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = err
        errors = CLIHarness.Collected(err.fileHandleForReading)
        try process.run()
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let fd = try? UnixSocket.connect(to: path, timeout: 1) {
                close(fd)
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw CLIHarness.TimedOut(description: "the socket agent at \(path) did not start; stderr: \(stop())")
    }

    /// SIGTERM, then its stderr once it has exited.
    @discardableResult
    func stop() -> String {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = errors.text()
        StderrAudit.check(text, from: "auth-agent serve")
        return text
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }
}

/// One host's connection to a socket agent: requests out, answers and notifications in.
final class SocketClient {
    let fd: Int32
    private var buffer: [UInt8] = []
    /// Notifications read while waiting for an answer.
    private(set) var notifications: [JSONValue] = []

    init(_ path: String, timeout: Double = 10) throws {
        fd = try UnixSocket.connect(to: path, timeout: timeout)
    }

    deinit { close(fd) }

    func send(_ message: JSONValue) {
        var bytes = JSONSerializer.bytes(message)
        bytes.append(0x0A)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
    }

    /// The next message, or nil at end of input or after the socket's timeout.
    func next() -> JSONValue? {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<nl])
                buffer.removeFirst(nl + 1)
                return try? JSONParser.parse(line)
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n <= 0 { return nil }
            buffer += chunk[..<n]
        }
    }

    /// Sends a request and returns its answer; notifications on the way are kept.
    func call(_ method: String, _ params: JSONValue = [:], id: JSONValue = 1) -> JSONValue? {
        send(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": params])
        while let message = next() {
            if message["id"] == id { return message }
            notifications.append(message)
        }
        return nil
    }

    /// Shortens the wait for `next` (to see that nothing comes).
    func setTimeout(_ seconds: Double) { UnixSocket.setTimeout(fd, seconds) }

    /// True when the agent closes the connection (end of input) within `seconds`, unanswered.
    func isClosedByTheAgent(within seconds: Double) -> Bool {
        setTimeout(seconds)
        var byte: UInt8 = 0
        return read(fd, &byte, 1) == 0
    }
}
