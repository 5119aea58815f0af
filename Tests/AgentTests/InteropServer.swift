#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSON
import TestSupport
import XCTest

/// A real server started by a script of `Tests/Interop` — django-oauth-toolkit
/// (`start-server.sh`, the default) or Glewlwyd (`start-glewlwyd.sh`) — in a
/// process group of its own so that stopping it ends the script, pip and the
/// server alike, whatever stage they reached.
final class InteropServer: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Interop/start-server.sh")

    /// The JSON line the script wrote: endpoints, user, client ids and secret.
    private(set) var info: JSONValue = .null
    private let pid: pid_t
    private let directory: URL
    private let lock = NSLock()
    private var stopped = false

    /// What the script's exit code means: 3 and 4 are "cannot install here", a skip, not a failure.
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Why `start-server.sh` cannot run here, by exit code: a skip, not a failure.
    static let skips: [Int32: String] = [3: "python3 -m venv is unavailable here", 4: "installing django-oauth-toolkit from PyPI failed"]

    /// Runs the script (`start-server.sh`, or another with the same contract: an info
    /// file with a URL under `readyKey`, exit codes in `skips` meaning "cannot run here") and
    /// waits (bounded) until its info file exists and the server answers that URL with 200.
    /// Throws `XCTSkip` for an exit code in `skips`, its message starting with `skipLabel`.
    /// The info and log files go to `directory` (a fresh one by default), removed by `stop`.
    static func start(script: URL = script, skips: [Int32: String] = skips, skipLabel: String = "interop",
                      readyKey: String = "discoveryUrl", directory: URL? = nil, environment: [String: String],
                      installTimeout: TimeInterval = 150, readyTimeout: TimeInterval = 30) throws -> InteropServer {
        let directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-interop-test-\(UUID().uuidString)")
        // 0700: the server description carries the confidential client's secret.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let infoPath = directory.appendingPathComponent("server.json").path
        let logPath = directory.appendingPathComponent("server.log").path
        let pid = try spawnInOwnGroup(["/bin/bash", script.path, infoPath], environment: environment, log: logPath)
        let server = InteropServer(pid: pid, directory: directory)
        func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(3000)) } ?? "" }

        let deadline = Date().addingTimeInterval(installTimeout)
        while !FileManager.default.fileExists(atPath: infoPath) {
            if let status = server.exitStatus() {
                server.stop()
                if let why = skips[status] { throw XCTSkip("\(skipLabel): \(why):\n\(log())") }
                throw StartFailure(description: "\(script.lastPathComponent) exited with \(status):\n\(log())")
            }
            guard Date() < deadline else {
                server.stop()
                throw StartFailure(description: "\(script.lastPathComponent) did not describe the server within \(Int(installTimeout)) s:\n\(log())")
            }
            usleep(100_000)
        }
        do {
            server.info = try JSONParser.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: infoPath))))
        } catch {
            server.stop()
            throw StartFailure(description: "unreadable server description: \(error)")
        }
        guard let discovery = server.info[readyKey]?.stringValue.flatMap(URL.init(string:)) else {
            server.stop()
            throw StartFailure(description: "the server description has no \(readyKey): \(server.info)")
        }
        let browser = Browser(timeout: 2)
        let readyBy = Date().addingTimeInterval(readyTimeout)
        while (try? browser.fetch("GET", discovery, form: nil))?.status != 200 {
            if server.exitStatus() != nil || Date() > readyBy {
                server.stop()
                throw StartFailure(description: "the server did not answer \(discovery) within \(Int(readyTimeout)) s:\n\(log())")
            }
            usleep(100_000)
        }
        return server
    }

    /// One server for a whole test class, started by the first test that asks (`start`) and
    /// stopped in the class's `tearDown`; a failed start fails (or skips) every test alike.
    final class Shared: @unchecked Sendable {
        private let lock = NSLock()
        private var started: Result<InteropServer, Error>?

        func server(_ start: () throws -> InteropServer) throws -> InteropServer {
            lock.lock()
            defer { lock.unlock() }
            if started == nil { started = Result(catching: start) }
            return try started!.get()
        }

        func stop() {
            lock.lock()
            defer { lock.unlock() }
            if case .success(let server)? = started { server.stop() }
            started = nil
        }

        /// A test's start: skipped when AUTH_AGENT_SKIP_INTEROP=1, else the class's one server
        /// (started by `start` on first use) and a temporary directory of the test's own.
        func setUp(_ start: () throws -> InteropServer, directoryPrefix: String) throws -> (InteropServer, URL) {
            if ProcessInfo.processInfo.environment["AUTH_AGENT_SKIP_INTEROP"] == "1" {
                throw XCTSkip("interop tests turned off by AUTH_AGENT_SKIP_INTEROP=1")
            }
            return (try server(start), try TemporaryDirectory(prefix: directoryPrefix).url)
        }
    }

    private init(pid: pid_t, directory: URL) {
        self.pid = pid
        self.directory = directory
    }

    subscript(_ key: String) -> String {
        info[key]?.stringValue ?? ""
    }

    /// The server's people, `alice` first (also `self["username"]`/`self["password"]`) then `bob`,
    /// so a test can hold two accounts of one provider at once.
    var users: [(username: String, password: String)] {
        (info["users"]?.arrayValue ?? []).compactMap { user in
            guard let username = user["username"]?.stringValue, let password = user["password"]?.stringValue else { return nil }
            return (username, password)
        }
    }

    func client(_ grant: String) -> (id: String, secret: String?) {
        (info["clients"]?[grant]?["clientId"]?.stringValue ?? "", info["clients"]?[grant]?["clientSecret"]?.stringValue)
    }

    /// TERM to the whole group, KILL after 5 s, then reap; removes the info and log files. Idempotent.
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        kill(-pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while exitStatus() == nil && Date() < deadline { usleep(50_000) }
        kill(-pid, SIGKILL)
        if exitStatus() == nil {
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private let reaped = NSLock()
    private var exitCode: Int32?

    /// The script's exit code once it has ended (reaping it), nil while it runs.
    func exitStatus() -> Int32? {
        reaped.lock()
        defer { reaped.unlock() }
        if let exitCode { return exitCode }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return rc < 0 ? -1 : nil }
        exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return exitCode
    }

    /// posix_spawn with POSIX_SPAWN_SETPGROUP (Foundation's Process cannot make a
    /// new process group), stdin from /dev/null and stdout+stderr to `log`.
    static func spawnInOwnGroup(_ arguments: [String], environment: [String: String], log: String) throws -> pid_t {
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t? = nil
        var actions: posix_spawn_file_actions_t? = nil
        #else
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        #endif
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        var merged = ProcessInfo.processInfo.environment
        for (key, value) in environment { merged[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
        guard rc == 0 else { throw StartFailure(description: "posix_spawn \(arguments[0]) failed: \(String(cString: strerror(rc)))") }
        return pid
    }
}
