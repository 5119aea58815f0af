import Foundation

/// Start-up of the one-shot helpers, which run once per git or kubectl command: `token` and
/// `git-credential get` with a fresh token already in the store, whole process, beside the empty
/// program measured in the same run.
enum HelperStart {
    static func run(report: Report, agentPath: String, empty: Measure.Program, runs: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-helpers-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.json")
        let text = """
            {"store": {"kind": "file", "path": "\(directory.appendingPathComponent("store").path)"},
             "providers": [{"id": "bench", "flow": "token", "origins": ["https://git.example.com"]}]}
            """
        try? Data(text.utf8).write(to: config)
        let args = ["--config", config.path]
        // Log in once through the command line itself, so the store holds what a user's would.
        let login = ChildProcess(agentPath, ["login", "bench", "--token-stdin"] + args)
        login.write(Array("bench-token-0123456789\n".utf8))
        login.closeInput()
        guard login.wait().0 == 0 else {
            report.row("helpers", agent: "login failed", baseline: "", ratio: "")
            return
        }
        let token = Measure.coldStarts([Measure.Program(path: agentPath, arguments: ["token", "bench"] + args, line: []), empty],
                                       runs: runs)
        report.row("start: token P", agent: Report.millis(token[0].millis), baseline: Report.millis(token[1].millis) + " (empty)",
                   ratio: String(format: "%.2f× empty", token[0].millis / token[1].millis))
        // The request ends with a blank line, so the helper answers before its stdin closes.
        let request = Array("protocol=https\nhost=git.example.com\npath=repo.git\n\n".utf8)
        let git = Measure.coldStarts([Measure.Program(path: agentPath, arguments: ["git-credential", "get"] + args, line: request), empty],
                                     runs: runs)
        report.row("start: git-credential", agent: Report.millis(git[0].millis), baseline: Report.millis(git[1].millis) + " (empty)",
                   ratio: String(format: "%.2f× empty", git[0].millis / git[1].millis))
        SocketScenario.run(report: report, agentPath: agentPath, config: config.path, directory: directory, empty: empty, runs: runs)
    }
}
