import AuthCore
import Foundation

/// `--mcp URL --config PATH --provider ID [--mcp-remote PATH] [--python-sdk PYTHON]`: `auth-agent mcp` against a running MCP
/// server (the tests' FastMCP: Tests/MCP/start-server.sh) beside the same requests POSTed directly with the
/// provider's token from this process (libcurl, as the bridge sends them): a `tools/call` round trip (the
/// two interleaved, p50 and p99 of 300), start-up to the first answer with the tokens stored, and idle RSS.
/// Given mcp-remote or the Python SDK's proxy (or both), each is measured the same way in the same turns
/// (logged in first, through the browser shim, with a token store of its own), and each figure gets its
/// ratio to each peer's, and the Python proxy's its ratio to mcp-remote's.
enum McpScenario {
    static func run(report: Report, agentPath: String, url: String, config: String, provider: String, iterations: Int, mcpRemote: String?, pythonSDK: String?,
                    sdkHost: String? = nil) {
        let tokenProcess = ChildProcess(agentPath, ["token", provider, "--config", config])
        tokenProcess.closeInput()
        guard let token = tokenProcess.readLine(), tokenProcess.wait().0 == 0 else {
            FileHandle.standardError.write(Data("auth-agent-bench: no token for \(provider); log in first (auth-agent login \(provider))\n".utf8))
            exit(1)
        }
        let bench = BridgeBench("mcp")
        defer { bench.remove() }
        let ours = bench.agent(agentPath, config: config)
        let peers = (mcpRemote.map { [bench.mcpRemote($0)] } ?? []) + (pythonSDK.map { [bench.pythonSDK($0)] } ?? [])
        for peer in peers where !peer.session(url).called {
            FileHandle.standardError.write(Data("auth-agent-bench: \(peer.name) did not log in and answer (its log: \(peer.errors ?? ""))\n".utf8))
            exit(1)
        }
        let direct = Direct(url: url, authorization: "Bearer " + token)

        // Round trip: one bridge of each kind, its session open; each call once through each and once directly, in turns.
        // A host sends `notifications/initialized` after `initialize`'s answer (mcp-remote forwards it at
        // once, before the session id is known, if sent sooner).
        let open = ([ours] + peers).map { bridge -> ChildProcess in
            let child = bridge.start(url)
            child.write(Array((initialize(1) + "\n").utf8))
            _ = child.readLine()
            child.write(Array((initialized + "\n").utf8))
            return child
        }
        // A call that is never answered must not hold the bench: each bridge ends by then.
        let watchdogs = open.map { Bridge.Watchdog($0.pid, seconds: 60 + iterations) }
        direct.open()
        var via = [[Double]](repeating: [], count: open.count), viaDirect: [Double] = []
        for i in 0..<iterations {
            let line = echo(i + 2)
            for (k, child) in open.enumerated() {
                let t0 = monotonicNanos()
                child.write(Array(line.utf8) + [0x0A])
                while let answer = child.readLine(), !answer.contains("\"id\":\(i + 2)") {}
                via[k].append(Double(monotonicNanos() - t0) / 1e6)
            }
            let t0 = monotonicNanos()
            _ = direct.post(line)
            viaDirect.append(Double(monotonicNanos() - t0) / 1e6)
        }
        usleep(1_000_000)
        let idle = open.map { Bridge.treeResidentKiB($0.pid) }
        watchdogs.forEach { $0.disarm() }
        for child in open {
            child.closeInput()
            _ = child.wait(within: 10)
        }
        for (name, rank) in [("p50", 50), ("p99", 99)] {
            let (b, d) = (percentile(via[0], rank), percentile(viaDirect, rank))
            report.row("mcp tools/call \(name) (\(iterations))", agent: Report.millis(b), baseline: Report.millis(d) + " (direct POST)",
                       ratio: String(format: "%.2f× (+%.2f ms)", b / d, b - d))
            versus(report, "", b, peers.indices.map { (peers[$0].name, percentile(via[$0 + 1], rank)) }, Report.millis)
        }

        if let sdkHost { sdkHosted(report, python: sdkHost, bridges: [ours] + peers, url: url, calls: iterations) }

        // Start-up: a new bridge answering `initialize` (the tokens stored) beside a direct `initialize` POST
        // (a new session each), and a new mcp-remote, in turns.
        var starts: [Double] = [], posts: [Double] = [], peerStarts = [[Double]](repeating: [], count: peers.count)
        for _ in 0..<20 {
            starts.append(startUp(ours, url))
            let t0 = monotonicNanos()
            Direct(url: url, authorization: "Bearer " + token).open()
            posts.append(Double(monotonicNanos() - t0) / 1e6)
            for (k, peer) in peers.enumerated() { peerStarts[k].append(startUp(peer, url)) }
        }
        let (s, p) = (Measure.median(starts), Measure.median(posts))
        report.row("mcp start-up to initialize answer", agent: Report.millis(s), baseline: Report.millis(p) + " (direct POST)",
                   ratio: String(format: "+%.2f ms", s - p))
        versus(report, "", s, peers.indices.map { (peers[$0].name, Measure.median(peerStarts[$0])) }, Report.millis)
        report.row("mcp idle RSS (session open)", agent: Report.mebibytes(idle[0]), baseline: peers.isEmpty ? "mcp-remote, python-sdk: not given" : "", ratio: "")
        versus(report, " (process tree)", Double(idle[0]), peers.indices.map { (peers[$0].name, Double(idle[$0 + 1])) }) { Report.mebibytes(Int($0)) }
    }

    /// `--sdk-host PYTHON`: the same `tools/call`s with the MCP Python SDK as the host (Peers/python-sdk-host.py
    /// launching each bridge, the SDK's own work included), one session of `calls` per bridge, three rounds
    /// with the order turning; the median of the rounds' p50 and p99.
    static func sdkHosted(_ report: Report, python: String, bridges: [Bridge], url: String, calls: Int) {
        var p50 = [[Double]](repeating: [], count: bridges.count), p99 = p50
        for round in 0..<3 {
            let order = round % 2 == 0 ? Array(bridges.indices) : bridges.indices.reversed()
            for k in order {
                let bridge = bridges[k]
                let host = ChildProcess(python, [Self.sdkHost, "--calls", String(calls), "--", bridge.executable] + bridge.arguments.map { $0 == "URL" ? url : $0 },
                                        environment: bridge.environment, errors: bridge.errors)
                host.closeInput()
                let watchdog = Bridge.Watchdog(host.pid, seconds: 60 + calls)
                defer { watchdog.disarm() }
                guard let line = host.readLine(), let seen = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Double],
                      let median = seen["p50"], let tail = seen["p99"] else {
                    report.row("mcp tools/call with the Python SDK as host", agent: "\(bridge.name): no figures", baseline: "", ratio: "")
                    return
                }
                _ = host.wait(within: 10)
                p50[k].append(median)
                p99[k].append(tail)
            }
        }
        for (name, figures) in [("p50", p50), ("p99", p99)] {
            let ours = Measure.median(figures[0])
            report.row("mcp tools/call \(name), Python SDK host (\(calls))", agent: Report.millis(ours), baseline: "3 sessions, in turns", ratio: "")
            versus(report, " (Python SDK host)", ours, bridges.indices.dropFirst().map { (bridges[$0].name, Measure.median(figures[$0])) }, Report.millis)
        }
    }

    /// The SDK host's source, beside this file in the checkout the bench was built from.
    static let sdkHost = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/python-sdk-host.py").path

    /// Rows of the bridge's figure beside each peer's, with their ratios; with two peers, the second's
    /// (the Python SDK's proxy) beside the first's (mcp-remote's) too.
    static func versus(_ report: Report, _ label: String, _ ours: Double, _ peers: [(name: String, value: Double)], _ format: (Double) -> String) {
        for peer in peers {
            report.row("  beside \(peer.name)\(label)", agent: format(ours), baseline: format(peer.value) + " (\(peer.name))",
                       ratio: String(format: "%.2f× \(peer.name)", ours / peer.value))
        }
        if peers.count == 2 {
            let (python, remote) = (peers[1], peers[0])
            report.row("  \(python.name) beside \(remote.name)\(label)", agent: format(python.value) + " (\(python.name))",
                       baseline: format(remote.value) + " (\(remote.name))", ratio: String(format: "%.2f× \(remote.name)", python.value / remote.value))
        }
    }

    static func percentile(_ samples: [Double], _ rank: Int) -> Double {
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, sorted.count * rank / 100)]
    }

    /// Milliseconds from a new bridge's start to `initialize`'s answer (it then ends).
    static func startUp(_ bridge: Bridge, _ url: String) -> Double {
        let t0 = monotonicNanos()
        let child = bridge.start(url)
        let watchdog = Bridge.Watchdog(child.pid, seconds: 60)
        child.write(Array((initialize(1) + "\n").utf8))
        _ = child.readLine()
        let ms = Double(monotonicNanos() - t0) / 1e6
        watchdog.disarm()
        child.closeInput()
        _ = child.wait(within: 10)
        return ms
    }

    static func initialize(_ id: Int) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
    }

    static let initialized = #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#

    /// The test server's `echo` tool, called with request id `id`.
    static func echo(_ id: Int) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#
    }

    /// Requests as the bridge makes them (headers, session), from this process, waited for in turn.
    final class Direct: @unchecked Sendable {
        let url: String
        let authorization: String
        let transport = CurlTransport(maxResponseBytes: 16 << 20)
        var session: String?

        init(url: String, authorization: String) {
            self.url = url
            self.authorization = authorization
        }

        func open() {
            let response = post(McpScenario.initialize(1))
            session = response?.headers["mcp-session-id"]
        }

        @discardableResult
        func post(_ body: String) -> HTTPResponse? {
            var headers = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"), ("Authorization", authorization)]
            if let session { headers += [("Mcp-Session-Id", session), ("MCP-Protocol-Version", "2025-11-25")] }
            let request = HTTPRequest(method: "POST", url: url, headers: headers, body: Array(body.utf8), timeout: 30)
            let done = DispatchSemaphore(value: 0)
            let box = Box()
            let transport = self.transport
            Task {
                box.response = try? await transport.send(request)
                done.signal()
            }
            done.wait()
            return box.response
        }

        final class Box: @unchecked Sendable { var response: HTTPResponse? }
    }
}
