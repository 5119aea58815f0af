import Foundation

/// `--mcp-restart SCRIPT [--rounds N]`: the scenario users complain about most — an MCP server that
/// forgets its registrations (FastMCP's in-memory provider, restarted: claude-code#84614,
/// python-sdk#3250). SCRIPT starts the server (the tests' Tests/MCP/start-server.sh); the bench runs
/// it on one port, lets a first `auth-agent mcp URL` learn it (registration, login), then restarts it
/// N times with its state gone and times a new bridge's `initialize` answer after each restart (it
/// registers again and logs in) beside the next new bridge's (nothing to do), counting the
/// registrations and logins in the server's request log. The browser is a shim on the PATH that
/// follows `/authorize`'s redirect, as in the tests; mcp-remote (npm) is not run here.
enum RestartScenario {
    static func run(report: Report, agentPath: String, script: String, rounds: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-restart-\(getpid())")
        try? FileManager.default.createDirectory(at: directory.appendingPathComponent("bin"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let opener = directory.appendingPathComponent("bin/xdg-open").path
        let shim = "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' \"$1\"\n"
        FileManager.default.createFile(atPath: opener, contents: Data(shim.utf8), attributes: [.posixPermissions: 0o700])
        let config = directory.appendingPathComponent("config.json").path
        FileManager.default.createFile(atPath: config, contents: Data("{\"store\": {\"kind\": \"file\", \"path\": \"\(directory.path)/store\"}}".utf8),
                                       attributes: [.posixPermissions: 0o600])
        let requestLog = directory.appendingPathComponent("requests.log").path
        let environment = ["DISPLAY": ":0", "SSH_CONNECTION": "",
                           "PATH": directory.appendingPathComponent("bin").path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        var server = Server(script: script, port: nil, requestLog: requestLog)
        guard let url = server.url else { fail("the server did not start (\(script))") }
        let bridge = { () -> Double in
            let t0 = monotonicNanos()
            let child = ChildProcess(agentPath, ["mcp", url, "--config", config], environment: environment)
            child.write(Array((McpScenario.initialize(1) + "\n").utf8))
            let answer = child.readLine()
            guard let answer, answer.contains("\"result\"") else { fail("the bridge did not answer initialize: \(answer ?? "no answer")") }
            let ms = Double(monotonicNanos() - t0) / 1e6
            child.closeInput()
            _ = child.wait()
            return ms
        }
        let first = bridge()
        var recoveries: [Double] = [], unchanged: [Double] = []
        var registrations = 0, logins = 0
        for _ in 0..<rounds {
            server.stop()
            server = Server(script: script, port: server.port, requestLog: requestLog)
            guard server.url == url else { fail("the server did not start again on its port") }
            truncate(requestLog, 0)
            recoveries.append(bridge())
            unchanged.append(bridge())
            let lines = ((try? String(contentsOfFile: requestLog, encoding: .utf8)) ?? "").split(separator: "\n")
            registrations += lines.filter { $0.hasPrefix("POST /register ") }.count
            logins += lines.filter { $0.hasSuffix(" authorization_code") }.count
        }
        server.stop()
        report.row("mcp first bridge: learn, register, log in", agent: Report.millis(first), baseline: "", ratio: "")
        report.row("mcp new bridge after the server forgot its clients (\(rounds))", agent: Report.millis(Measure.median(recoveries)),
                   baseline: "mcp-remote: not run here", ratio: "\(registrations) registrations, \(logins) logins in \(rounds) restarts")
        report.row("mcp next new bridge (nothing to do)", agent: Report.millis(Measure.median(unchanged)), baseline: "", ratio: "")
    }

    private static func fail(_ why: String) -> Never {
        FileHandle.standardError.write(Data("auth-agent-bench: \(why)\n".utf8))
        exit(1)
    }

    /// The server script running in the background, its MCP URL once its info line was written.
    struct Server {
        let process: ChildProcess
        let port: Int?
        let url: String?

        init(script: String, port: Int?, requestLog: String) {
            let info = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-server-\(getpid())-\(monotonicNanos()).json").path
            var environment = ["FASTMCP_REQUEST_LOG": requestLog, "FASTMCP_PARENT_PID": String(getpid())]
            if let port { environment["FASTMCP_PORT"] = String(port) }
            process = ChildProcess("/bin/bash", [script, info], environment: environment)
            var found: [String: Any]?
            // The first start may install the server's virtualenv (a minute or two).
            for _ in 0..<3000 where found == nil {
                if let data = FileManager.default.contents(atPath: info) { found = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] }
                if found == nil { usleep(100_000) }
            }
            try? FileManager.default.removeItem(atPath: info)
            self.port = found?["port"] as? Int
            // The info line is written before the server listens.
            self.url = self.port.flatMap { Self.listening(on: $0) ? found?["mcpUrl"] as? String : nil }
        }

        /// Whether 127.0.0.1:`port` accepts a connection within 30 s.
        static func listening(on port: Int) -> Bool {
            for _ in 0..<300 {
                if let fd = loopbackConnection(port: port) {
                    close(fd)
                    return true
                }
                usleep(100_000)
            }
            return false
        }

        func stop() {
            kill(process.pid, SIGTERM)
            process.closeInput()
            _ = process.wait()
        }
    }
}
