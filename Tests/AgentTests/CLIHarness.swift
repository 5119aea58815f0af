import DevIssuer
import Foundation
import JSON
import JSONRPC
import Locking
import TestSupport
import XCTest

/// A dev issuer and a file-store configuration for the one-shot subcommands, and a way to run
/// the built binary (or a helper script) to its end with bounded waits.
final class CLIHarness: Sendable {
    let issuer: DevIssuer
    let directory: URL
    let configPath: URL
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("CLI")

    init(issuerOptions: DevIssuerOptions = .init(), refreshWindowSeconds: Int = 60, extraOrigins: [String] = [], memoryStore: Bool = false) throws {
        issuer = DevIssuer(options: issuerOptions)
        _ = try issuer.start(port: 0)
        directory = try TemporaryDirectory(prefix: "auth-agent-cli").url
        configPath = directory.appendingPathComponent("config.json")
        try writeConfig(refreshWindowSeconds: refreshWindowSeconds, extraOrigins: extraOrigins, memoryStore: memoryStore)
    }

    deinit {
        issuer.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// `corp` (password grant, covering the issuer, `extraOrigins` and `shapedOrigins`: `{"origin": …, "audience": …}`
    /// objects), `device` (device code) and `pasted` (a token).
    func writeConfig(refreshWindowSeconds: Int = 60, extraOrigins: [String] = [], shapedOrigins: [JSONValue] = [], memoryStore: Bool = false) throws {
        let base = issuer.baseURL
        let store: JSONValue = memoryStore ? ["kind": "memory"] : ["kind": "file", "path": .string(directory.appendingPathComponent("store").path)]
        let config: JSONValue = [
            "refreshWindowSeconds": .int(Int64(refreshWindowSeconds)), "store": store,
            "providers": [
                ["id": "corp", "displayName": "Corp SSO", "flow": "password", "origins": .array(([base] + extraOrigins).map { .string($0) } + shapedOrigins),
                 "tokenEndpoint": .string(base + "/token"), "revocationEndpoint": .string(base + "/revoke"), "clientId": "cli"],
                ["id": "pasted-git", "flow": "token", "origins": ["https://git.pasted.example"], "gitUsername": "x-access-token"],
                ["id": "device", "displayName": "Device Login", "flow": "deviceCode", "origins": ["https://device.example"],
                 "issuer": .string(base), "clientId": "cli", "openBrowser": false],
                ["id": "pasted", "displayName": "Pasted", "flow": "token", "origins": ["https://pasted.example"]],
            ],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: configPath)
    }

    /// The full path of `tool` on the PATH, if any.
    static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The helper servers and the pty driver are Python 3 (standard library only).
    static func requirePython() throws {
        guard which("python3") != nil else { throw XCTSkip("python3 is not installed; the helper servers and the pty driver need it") }
    }

    var environment: [String: String] {
        ["AUTH_AGENT_CONFIG": configPath.path, "XDG_STATE_HOME": directory.path, "GIT_TERMINAL_PROMPT": "0"]
    }

    struct Finished: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    /// Runs the agent binary with `arguments` and `stdin`, waiting at most `timeout` seconds.
    func agent(_ arguments: [String], stdin: String = "", environment extra: [String: String] = [:], timeout: Double = 30) throws -> Finished {
        try Self.run(AgentProcess.binaryURL.path, arguments, stdin: stdin, environment: environment.merging(extra) { $1 }, timeout: timeout)
    }

    func login(_ provider: String = "corp", as user: (name: String, password: String) = ("alice", "wonderland")) throws {
        let r = try agent(["login", provider, "--username", user.name, "--password-stdin"], stdin: user.password + "\n")
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// Any program to its end; stdout and stderr are collected on their own threads so neither pipe fills.
    static func run(_ executable: String, _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
                    directory: URL? = nil, timeout: Double = 30) throws -> Finished {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        // As in AgentProcess: no SSH session without a display unless the test sets one.
        process.environment = ProcessInfo.processInfo.environment.merging(["SSH_CONNECTION": ""]) { $1 }.merging(environment) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        let out = Collected(output.fileHandleForReading), err = Collected(errors.fileHandleForReading)
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            throw TimedOut(description: "\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s; stderr: \(err.text())")
        }
        process.waitUntilExit()
        let finished = Finished(status: process.terminationStatus, stdout: out.text(), stderr: err.text())
        StderrAudit.check(finished.stderr, from: ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " "))
        return finished
    }

    struct TimedOut: Error, CustomStringConvertible { let description: String }

    /// Reads a pipe to its end on a thread of its own.
    final class Collected: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)
        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }
        func text() -> String {
            _ = done.wait(timeout: .now() + 5)
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// A helper server script (Python) running beside a test: its `{"port": N}` line, and it ends when its stdin closes.
final class ScriptServer {
    let process = Process()
    let port: Int
    private let input = Pipe()

    init(_ script: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", CLIHarness.scripts.appendingPathComponent(script).path] + arguments
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = Locked<Data?>(nil)
        let ready = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var bytes = Data()
            while true {
                let chunk = output.fileHandleForReading.readData(ofLength: 1)
                if chunk.isEmpty || chunk == Data([0x0A]) { break }
                bytes.append(chunk)
            }
            line.withLock { $0 = bytes }
            ready.signal()
        }
        guard ready.wait(timeout: .now() + 20) == .success, let data = line.current,
              let port = try? JSONParser.parse([UInt8](data))["port"]?.intValue else {
            process.terminate()
            throw CLIHarness.TimedOut(description: "\(script) did not start")
        }
        self.port = Int(port)
    }

    deinit {
        try? input.fileHandleForWriting.close()
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// What a command showed on a pseudo-terminal, and how it ended.
struct TerminalScreen {
    let output: String
    let status: Int
}

extension XCTestCase {
    /// Runs the agent with `arguments` (or `shell`'s command line) on a pty (Tests/CLI/pty_drive.py), playing `steps`.
    func onTerminal(_ h: CLIHarness, _ arguments: [String], steps: JSONValue, environment: [String: String] = [:], shell: String? = nil) throws -> TerminalScreen {
        let argv = shell.map { ["/bin/sh", "-c", $0] } ?? [AgentProcess.binaryURL.path] + arguments
        let env = h.environment.merging(["AGENT": AgentProcess.binaryURL.path]) { $1 }.merging(environment) { $1 }
        let r = try CLIHarness.run("/usr/bin/env", ["python3", CLIHarness.scripts.appendingPathComponent("pty_drive.py").path, JSONSerializer.string(steps)] + argv,
                                   environment: env, timeout: 90)
        XCTAssertEqual(r.status, 0, r.stderr)
        let result = try JSONParser.parse(r.stdout)
        return TerminalScreen(output: result["output"]?.stringValue ?? "", status: Int(result["status"]?.intValue ?? -1))
    }
}

extension CLIHarness {
    /// The environment of a person with a display whose browser follows the authorization URL to
    /// the agent's loopback listener: a fake `xdg-open` first on the PATH (the issuer must approve by itself).
    func followingBrowser() throws -> [String: String] {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let script = "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' \"$1\"\n"
        _ = FileManager.default.createFile(atPath: bin.appendingPathComponent("xdg-open").path, contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
        return ["DISPLAY": ":0", "SSH_CONNECTION": "", "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    /// Approves the device code as alice once the terminal's log (`PTY_LOG`) shows it.
    func approveDeviceWhenShown(log: URL) {
        for _ in 0..<400 {
            if let text = try? String(contentsOf: log, encoding: .utf8), let range = text.range(of: "enter the code ") {
                let code = text[range.upperBound...].prefix { !$0.isWhitespace }
                if !code.isEmpty, issuer.approveDevice(userCode: String(code), username: "alice") { return }
            }
            usleep(50_000)
        }
    }
}
