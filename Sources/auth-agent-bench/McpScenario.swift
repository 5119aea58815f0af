import AuthCore
import Foundation

/// `--mcp URL --config PATH --provider ID`: `auth-agent mcp` against a running MCP server (the
/// tests' FastMCP: Tests/MCP/start-server.sh) beside the same requests POSTed directly with the
/// provider's token from this process (libcurl, as the bridge sends them): a `tools/call` round
/// trip (the two interleaved, median of 200), start-up to the first answer, and idle RSS.
enum McpScenario {
    static func run(report: Report, agentPath: String, url: String, config: String, provider: String, iterations: Int) {
        let tokenProcess = ChildProcess(agentPath, ["token", provider, "--config", config])
        tokenProcess.closeInput()
        guard let token = tokenProcess.readLine(), tokenProcess.wait().0 == 0 else {
            FileHandle.standardError.write(Data("auth-agent-bench: no token for \(provider); log in first (auth-agent login \(provider))\n".utf8))
            exit(1)
        }
        let direct = Direct(url: url, authorization: "Bearer " + token)
        let call = #"{"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#

        // Round trip: one bridge, its session open; each call once through it and once directly, in turns.
        let bridge = ChildProcess(agentPath, ["mcp", url, "--config", config])
        bridge.write(Array((initialize(1) + "\n").utf8))
        _ = bridge.readLine()
        bridge.write(Array(#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.utf8) + [0x0A])
        direct.open()
        var viaBridge: [Double] = [], viaDirect: [Double] = []
        for i in 0..<iterations {
            let line = call.replacingOccurrences(of: "ID", with: String(i + 2))
            var t0 = monotonicNanos()
            bridge.write(Array(line.utf8) + [0x0A])
            while let answer = bridge.readLine(), !answer.contains("\"id\":\(i + 2)") {}
            viaBridge.append(Double(monotonicNanos() - t0) / 1e6)
            t0 = monotonicNanos()
            _ = direct.post(line)
            viaDirect.append(Double(monotonicNanos() - t0) / 1e6)
        }
        usleep(1_000_000)
        let idle = Measure.residentKiB(bridge.pid)
        bridge.closeInput()
        _ = bridge.wait()
        let (b, d) = (Measure.median(viaBridge), Measure.median(viaDirect))
        report.row("mcp tools/call p50 (\(iterations))", agent: Report.millis(b), baseline: Report.millis(d) + " (direct POST)",
                   ratio: String(format: "%.2f× (+%.2f ms)", b / d, b - d))

        // Start-up: a new bridge answering `initialize` beside a direct `initialize` POST (a new session each).
        var starts: [Double] = [], posts: [Double] = []
        for _ in 0..<20 {
            var t0 = monotonicNanos()
            let fresh = ChildProcess(agentPath, ["mcp", url, "--config", config])
            fresh.write(Array((initialize(1) + "\n").utf8))
            _ = fresh.readLine()
            starts.append(Double(monotonicNanos() - t0) / 1e6)
            fresh.closeInput()
            _ = fresh.wait()
            t0 = monotonicNanos()
            Direct(url: url, authorization: "Bearer " + token).open()
            posts.append(Double(monotonicNanos() - t0) / 1e6)
        }
        let (s, p) = (Measure.median(starts), Measure.median(posts))
        report.row("mcp start-up to initialize answer", agent: Report.millis(s), baseline: Report.millis(p) + " (direct POST)",
                   ratio: String(format: "+%.2f ms", s - p))
        report.row("mcp idle RSS (session open)", agent: Report.mebibytes(idle), baseline: "", ratio: "")
    }

    static func initialize(_ id: Int) -> String {
        #"{"jsonrpc":"2.0","id":\#(id),"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#
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
