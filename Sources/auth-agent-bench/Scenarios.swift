import Foundation

/// `sign` on a logged-in provider: a static-token provider with a file store,
/// so the figures are the agent's own work, not an auth server's.
enum Scenarios {
    static func runSign(report: Report, agentPath: String, selfPath: String, scale: Int, echoRate: Double, echoP50: Double,
                        empty: Measure.Program) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.json")
        let text = """
            {"store": {"kind": "file", "path": "\(directory.appendingPathComponent("store").path)"},
             "providers": [{"id": "bench", "flow": "token", "origins": ["https://api.example.com"]}]}
            """
        try? Data(text.utf8).write(to: config)
        let args = ["--config", config.path]
        let login = Array(#"{"jsonrpc":"2.0","id":0,"method":"login","params":{"provider":"bench","credentials":{"token":"bench-token-0123456789"}}}"#.utf8) + [0x0A]
        let sign = Array(#"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"https://api.example.com/v1/items?page=2"}}}"#.utf8) + [0x0A]

        let rate = Measure.pipelined(agentPath, args, line: sign, count: 300_000 / scale, prologue: [login])
        report.row("pipelined sign", agent: Report.rate(rate.rate), baseline: Report.rate(echoRate) + " (echo)",
                   ratio: String(format: "%.2f× echo", rate.rate / echoRate))
        // The same URL without its query, side by side: a query must cost about nothing (issue 21).
        let bare = Array(#"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"https://api.example.com/v1/items"}}}"#.utf8) + [0x0A]
        let bareRate = Measure.pipelined(agentPath, args, line: bare, count: 300_000 / scale, prologue: [login])
        report.row("pipelined sign, no query", agent: Report.rate(bareRate.rate), baseline: Report.rate(rate.rate) + " (with ?page=2)",
                   ratio: String(format: "%.2f× with query", bareRate.rate / rate.rate))
        let rt = Measure.roundTrip(agentPath, args, line: sign, iterations: 20_000 / scale, prologue: [login])
        report.row("sign round trip p50", agent: Report.micros(rt.p50), baseline: Report.micros(echoP50) + " (echo)",
                   ratio: String(format: "%.2f× echo", rt.p50 / echoP50))
        report.row("sign round trip p99", agent: Report.micros(rt.p99), baseline: "", ratio: "")
        let starts = Measure.coldStarts([Measure.Program(path: agentPath, arguments: args, line: sign), empty],
                                        runs: 60 / (scale > 1 ? 3 : 1))
        report.row("cold start (1 sign)", agent: Report.millis(starts[0].millis), baseline: Report.millis(starts[1].millis) + " (empty)",
                   ratio: String(format: "%.2f× empty", starts[0].millis / starts[1].millis))
        let (early, late) = residentGrowth(agentPath, args, line: sign, prologue: login, first: 100_000 / scale, total: 1_000_000 / scale)
        report.row("RSS at 100k → 1M signs", agent: "\(Report.mebibytes(early)) → \(Report.mebibytes(late))", baseline: "",
                   ratio: String(format: "%+.2f MiB", Double(late - early) / 1024))
    }

    /// Resident memory after `first` and after `total` pipelined signs, from /proc.
    static func residentGrowth(_ path: String, _ args: [String], line: [UInt8], prologue: [UInt8], first: Int, total: Int) -> (Int, Int) {
        let child = ChildProcess(path, args)
        child.write(prologue)
        _ = child.readLines(1)
        let chunk = Array([[UInt8]](repeating: line, count: 1000).joined())
        let writer = Thread {
            for _ in 0..<(total / 1000) { child.write(chunk) }
        }
        writer.start()
        _ = child.readLines(first)
        let early = Measure.residentKiB(child.pid)
        _ = child.readLines(total - first)
        let late = Measure.residentKiB(child.pid)
        child.closeInput()
        _ = child.wait()
        return (early, late)
    }
}
