import Foundation

/// `--mcp-restart SCRIPT [--rounds N] [--mcp-remote PATH] [--python-sdk PYTHON]`: the scenario users complain about most — an
/// MCP server that forgets its registrations (FastMCP's in-memory provider, restarted: claude-code#84614,
/// python-sdk#3250). SCRIPT starts the server (the tests' Tests/MCP/start-server.sh); the bench runs it
/// on one port, lets a first `auth-agent mcp URL` learn it (registration, login, with access tokens that
/// expire after a few seconds), times a new bridge once that token has expired, then restarts it N times
/// with its state gone and times a new bridge's `initialize` answer after each restart (it registers again
/// and logs in) beside the next new bridge's (nothing to do), counting the registrations and logins in the
/// server's request log, the browser openings, and whether the `tools/call` after `initialize` completed.
/// Given mcp-remote or the Python SDK's proxy, each goes through the same steps beside the bridge, taking
/// turns (the order reverses by round), each with its own token store; last, three bridges of each kind are started
/// together with empty stores, as a host starts three configured servers. The browser is a shim on the
/// PATH that follows `/authorize`'s redirect, as in the tests.
enum RestartScenario {
    /// The access tokens' lifetime while the first bridges log in: over by the next measure.
    static let shortLifetime = 4

    static func run(report: Report, agentPath: String, script: String, rounds: Int, mcpRemote: String?, pythonSDK: String?) {
        let bench = BridgeBench("restart")
        defer { bench.remove() }
        // Each kind of bridge, given the suffix of its directory's names (a store of its own).
        var kinds: [(String) -> Bridge] = [{ bench.agent(agentPath, tag: "agent" + $0) }]
        if let mcpRemote { kinds.append { bench.mcpRemote(mcpRemote, tag: "mcp-remote" + $0) } }
        if let pythonSDK { kinds.append { bench.pythonSDK(pythonSDK, tag: "python-sdk" + $0) } }
        let bridges = kinds.map { $0("") }
        let requestLog = bench.path("requests.log")
        var server = Server(script: script, port: nil, requestLog: requestLog)
        guard let url = server.url else { fail("the server did not start (\(script))") }
        let measured = { (bridge: Bridge) -> Tally in
            truncate(requestLog, 0)
            let opened = bridge.opened()
            return Tally(bridge.session(url), requests: requestLog, openings: bridge.opened() - opened)
        }
        server.accessTokenLifetime(shortLifetime)
        let first = bridges.map(measured)
        usleep(UInt32(shortLifetime + 1) * 1_000_000)
        server.accessTokenLifetime(3600)
        let expired = bridges.map(measured)
        var recovered = [Tally](repeating: Tally(), count: bridges.count), unchanged = recovered
        for round in 0..<rounds {
            server.stop()
            server = Server(script: script, port: server.port, requestLog: requestLog)
            guard server.url == url else { fail("the server did not start again on its port") }
            let order = round % 2 == 0 ? Array(bridges.indices) : bridges.indices.reversed()
            for i in order { recovered[i].add(measured(bridges[i])) }
            for i in order { unchanged[i].add(measured(bridges[i])) }
        }
        let together = kinds.map { kind -> Tally in
            let fresh = kind("-three")
            truncate(requestLog, 0)
            var tally = Tally(Self.together(fresh, url: url, count: 3), requests: requestLog, openings: fresh.opened())
            tally.millis = [tally.millis.max() ?? 0]  // the host waits for the slowest
            return tally
        }
        server.stop()
        let names = bridges.map(\.name)
        rows(report, "mcp first bridge: learn, register, log in", first, names)
        rows(report, "mcp new bridge after its access token expired", expired, names)
        rows(report, "mcp new bridge after the server forgot its clients (\(rounds))", recovered, names)
        rows(report, "mcp next new bridge (nothing to do)", unchanged, names)
        rows(report, "mcp three bridges started together, empty stores (slowest)", together, names)
    }

    /// Times (median) and counts of one measure for each bridge: the bridge's, then each peer's beside it
    /// with the bridge's ratio to it.
    private static func rows(_ report: Report, _ name: String, _ tallies: [Tally], _ names: [String]) {
        let agent = tallies[0]
        report.row(name, agent: Report.millis(agent.median), baseline: names.count > 1 ? "" : "mcp-remote, python-sdk: not given", ratio: "")
        report.row("  registrations, logins, refreshes, browser openings, calls completed", agent: agent.counts, baseline: "", ratio: "")
        for (peer, name) in zip(tallies, names).dropFirst() {
            report.row("  \(name): time; counts", agent: Report.millis(peer.median), baseline: peer.counts,
                       ratio: String(format: "auth-agent %.2f× \(name)", agent.median / peer.median))
        }
    }

    /// `count` host sessions of one bridge started at once, sharing its store.
    private static func together(_ bridge: Bridge, url: String, count: Int) -> [Bridge.Session] {
        let results = Results()
        let done = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            Thread {
                results.add(bridge.session(url))
                done.signal()
            }.start()
        }
        for _ in 0..<count { done.wait() }
        return results.sessions
    }

    private final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [Bridge.Session] = []
        func add(_ session: Bridge.Session) { lock.lock(); list.append(session); lock.unlock() }
        var sessions: [Bridge.Session] { lock.lock(); defer { lock.unlock() }; return list }
    }

    /// One bridge's figures over the sessions of a measure: their times, and what the server and the
    /// browser shim saw meanwhile.
    struct Tally {
        var millis: [Double] = []
        var registrations = 0, logins = 0, refreshes = 0, openings = 0, calls = 0, sessions = 0

        init() {}

        init(_ session: Bridge.Session, requests: String, openings: Int) {
            self.init([session], requests: requests, openings: openings)
        }

        init(_ sessions: [Bridge.Session], requests: String, openings: Int) {
            let lines = ((try? String(contentsOfFile: requests, encoding: .utf8)) ?? "").split(separator: "\n")
            millis = sessions.map(\.millis)
            registrations = lines.filter { $0.hasPrefix("POST /register ") }.count
            logins = lines.filter { $0.hasSuffix(" authorization_code") }.count
            refreshes = lines.filter { $0.hasSuffix(" refresh_token") }.count
            self.openings = openings
            calls = sessions.filter(\.called).count
            self.sessions = sessions.count
        }

        mutating func add(_ other: Tally) {
            millis += other.millis
            registrations += other.registrations
            logins += other.logins
            refreshes += other.refreshes
            openings += other.openings
            calls += other.calls
            sessions += other.sessions
        }

        var median: Double { millis.isEmpty ? 0 : Measure.median(millis) }
        var counts: String { "\(registrations), \(logins), \(refreshes), \(openings), \(calls)/\(sessions)" }
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

        /// Sets the lifetime of the access tokens the server issues from now on (its test route).
        func accessTokenLifetime(_ seconds: Int) {
            guard let url else { return }
            McpScenario.Direct(url: String(url.dropLast("/mcp".count)) + "/_test/access-token-lifetime", authorization: "")
                .post("seconds=\(seconds)")
        }

        func stop() {
            kill(process.pid, SIGTERM)
            process.closeInput()
            _ = process.wait()
        }
    }
}
