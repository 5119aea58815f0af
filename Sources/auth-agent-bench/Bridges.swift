import Foundation

/// An MCP bridge as a host runs it — a stdio process started for one server URL — that the bench
/// compares: `auth-agent mcp URL`, with `--mcp-remote PATH` mcp-remote (npm `mcp-remote`, one file
/// assembled by Peers/assemble-mcp-remote.sh, run by node), and with `--python-sdk PYTHON` the MCP Python
/// SDK's own OAuth client as a proxy (Peers/python-sdk-proxy.py). Each keeps its tokens where the bench put
/// them and opens the browser through the bench's shim, which notes every opening in the bridge's own
/// log, so logins are counted from the person's side (a browser tab) as well as from the server's.
struct Bridge {
    let name: String
    let executable: String
    /// The arguments around the server URL (`URL` stands for it).
    let arguments: [String]
    let environment: [String: String]
    /// The shim's log of the URLs this bridge opened in the browser.
    let openings: String
    /// Where its stderr goes: nil for the bench's own (auth-agent logs little), a file for mcp-remote's chatter.
    let errors: String?

    func start(_ url: String) -> ChildProcess {
        ChildProcess(executable, arguments.map { $0 == "URL" ? url : $0 }, environment: environment, errors: errors)
    }

    /// Browser openings so far.
    func opened() -> Int {
        ((try? String(contentsOfFile: openings, encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    /// What one host session saw: spawn to `initialize`'s answer, and whether that answer and the
    /// `tools/call` after it (the next call) came back as results.
    struct Session {
        let millis: Double
        let answered: Bool
        let called: Bool
    }

    /// A host session: start, `initialize` (timed to its answer), `notifications/initialized`,
    /// one `tools/call` (echo), end of input, exit. A bridge still busy after `deadline` seconds (a login
    /// that never ends: mcp-remote's secondary instances can wait for a code that goes to another) is
    /// killed, and its session counts as not answered.
    func session(_ url: String, deadline: Int = 60) -> Session {
        let t0 = monotonicNanos()
        let child = start(url)
        let watchdog = Watchdog(child.pid, seconds: deadline)
        defer { watchdog.disarm() }
        child.write(Array((McpScenario.initialize(1) + "\n").utf8))
        let answer = child.readLine()
        let millis = Double(monotonicNanos() - t0) / 1e6
        let answered = answer?.contains("\"result\"") ?? false
        var called = false
        if answered {
            child.write(Array((McpScenario.initialized + "\n" + McpScenario.echo(2) + "\n").utf8))
            while let line = child.readLine() {
                if line.contains("\"id\":2") {
                    called = line.contains("\"result\"")
                    break
                }
            }
        }
        watchdog.disarm()
        child.closeInput()
        _ = child.wait(within: 10)
        return Session(millis: millis, answered: answered, called: called)
    }

    /// Kills a process still running after a deadline, unless disarmed first (before it is reaped, so
    /// the pid is still its own).
    final class Watchdog: @unchecked Sendable {
        private let lock = NSLock()
        private var armed = true

        init(_ pid: pid_t, seconds: Int) {
            Thread { [self] in
                for _ in 0..<(seconds * 10) where isArmed { usleep(100_000) }
                lock.lock()
                if armed { kill(pid, SIGKILL) }
                armed = false
                lock.unlock()
            }.start()
        }

        private var isArmed: Bool { lock.lock(); defer { lock.unlock() }; return armed }

        func disarm() {
            lock.lock()
            armed = false
            lock.unlock()
        }
    }

    /// The bridge's process and its descendants' resident memory (node's workers, a wrapper's child), from /proc.
    static func treeResidentKiB(_ root: pid_t) -> Int {
        var parents: [pid_t: pid_t] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            // After "pid (comm)": state, then the parent's pid.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = pid_t(fields[1]) { parents[pid] = parent }
        }
        var tree: Set<pid_t> = [root], grew = true
        while grew {
            grew = false
            for (pid, parent) in parents where tree.contains(parent) && !tree.contains(pid) {
                tree.insert(pid)
                grew = true
            }
        }
        return tree.reduce(0) { $0 + Measure.residentKiB($1) }
    }
}

/// A scratch directory for one scenario's bridges: the browser shim on a PATH of its own, and each
/// bridge's store and logs.
final class BridgeBench {
    let directory: URL
    private let bin: URL

    init(_ tag: String) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-\(tag)-\(getpid())")
        bin = directory.appendingPathComponent("bin")
        try? FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        // The tests' browser: GET the URL, following `/authorize`'s redirect to the bridge's loopback
        // listener (the test servers approve at once); each opening noted in the bridge's log first.
        let shim = "#!/bin/sh\necho \"$1\" >> \"$AUTH_AGENT_BENCH_OPENINGS\"\n"
            + "exec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' \"$1\"\n"
        _ = FileManager.default.createFile(atPath: bin.appendingPathComponent("xdg-open").path, contents: Data(shim.utf8),
                                       attributes: [.posixPermissions: 0o700])
    }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func environment(openings: String) -> [String: String] {
        ["DISPLAY": ":0", "SSH_CONNECTION": "", "AUTH_AGENT_BENCH_OPENINGS": openings,
         "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
    }

    /// `auth-agent mcp URL --config CONFIG`; a new configuration with a file store of its own when `config` is nil.
    func agent(_ agentPath: String, config: String? = nil, tag: String = "agent") -> Bridge {
        let configPath = config ?? path("\(tag).json")
        if config == nil {
            _ = FileManager.default.createFile(atPath: configPath, contents: Data("{\"store\": {\"kind\": \"file\", \"path\": \"\(path(tag))-store\"}}".utf8),
                                           attributes: [.posixPermissions: 0o600])
        }
        return Bridge(name: "auth-agent", executable: agentPath, arguments: ["mcp", "URL", "--config", configPath],
                      environment: environment(openings: path("\(tag)-openings.log")), openings: path("\(tag)-openings.log"), errors: nil)
    }

    /// `node BUNDLE URL`, its tokens in a directory of its own (MCP_REMOTE_CONFIG_DIR, and HOME, so no
    /// user's ~/.mcp-auth is read or written).
    func mcpRemote(_ bundle: String, tag: String = "mcp-remote") -> Bridge {
        let home = path("\(tag)-home")
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var environment = environment(openings: path("\(tag)-openings.log"))
        environment["HOME"] = home
        environment["MCP_REMOTE_CONFIG_DIR"] = home + "/.mcp-auth"
        return Bridge(name: "mcp-remote", executable: Self.node(), arguments: [bundle, "URL"], environment: environment,
                      openings: path("\(tag)-openings.log"), errors: path("\(tag).log"))
    }

    /// `PYTHON python-sdk-proxy.py URL --store DIR`: the SDK's OAuth client with its tokens in a directory of
    /// its own, its browser the shim through `BROWSER` (Python's `webbrowser` would otherwise pick the
    /// desktop's default browser before `xdg-open`).
    func pythonSDK(_ python: String, tag: String = "python-sdk") -> Bridge {
        var environment = environment(openings: path("\(tag)-openings.log"))
        environment["BROWSER"] = bin.appendingPathComponent("xdg-open").path
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        return Bridge(name: "python-sdk", executable: python, arguments: [Self.pythonProxy, "URL", "--store", path("\(tag)-store")],
                      environment: environment, openings: path("\(tag)-openings.log"), errors: path("\(tag).log"))
    }

    /// The proxy's source, beside this file in the checkout the bench was built from.
    static let pythonProxy = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Peers/python-sdk-proxy.py").path

    /// node's path on the PATH (posix_spawn takes a path).
    static func node() -> String {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map { "\($0)/node" }
        return paths.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/node"
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
