import Foundation

/// Start-up of the one-shot helpers, which run once per git or kubectl command: `token` and
/// `git-credential get` with a fresh token already in the store, whole process, beside the empty
/// program measured in the same run, in turns. Each runs twice: with `store.kind: file`, and with
/// the default configuration (no `store` key: `auto`), whose login chose files when no Secret
/// Service answered — run the bench without `DBUS_SESSION_BUS_ADDRESS` to measure that machine.
enum HelperStart {
    /// `independent` and `floor`: `IndependentEmpty`'s programs, measured in the same turns as the second and third yardsticks.
    static func run(report: Report, agentPath: String, empty: Measure.Program, independent: String?, floor: String?, runs: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-helpers-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let provider = #"[{"id": "bench", "flow": "token", "origins": ["https://git.example.com"]}]"#
        let file = directory.appendingPathComponent("file.json")
        try? Data(#"{"store": {"kind": "file", "path": "\#(directory.appendingPathComponent("store").path)"}, "providers": \#(provider)}"#.utf8)
            .write(to: file)
        // The default store lives under $XDG_STATE_HOME, here the bench's own directory.
        let defaults = directory.appendingPathComponent("default.json")
        try? Data(#"{"providers": \#(provider)}"#.utf8).write(to: defaults)
        let environment = ["XDG_STATE_HOME": directory.appendingPathComponent("state").path]
        let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] == nil ? "no bus" : "bus set"
        let stores = [("file", ["--config", file.path]), ("default, \(bus)", ["--config", defaults.path])]
        for (_, args) in stores {
            // Log in once through the command line itself, so the store holds what a user's would.
            let login = ChildProcess(agentPath, ["login", "bench", "--token-stdin"] + args, environment: environment)
            login.write(Array("bench-token-0123456789\n".utf8))
            login.closeInput()
            guard login.wait().0 == 0 else {
                report.row("helpers", agent: "login failed", baseline: "", ratio: "")
                return
            }
        }
        var baseline = empty
        baseline.environment = environment
        // The request ends with a blank line, so the helper answers before its stdin closes.
        let request = Array("protocol=https\nhost=git.example.com\npath=repo.git\n\n".utf8)
        // It prints nothing and exits: its start is timed to its end, as the helpers' are.
        let yardsticks = [("independent", independent), ("floor", floor)].compactMap { name, path in
            path.map { (name, Measure.Program(path: $0, arguments: [], line: [], environment: environment)) }
        }
        for (name, command, line) in [("token P", ["token", "bench"], [UInt8]()), ("git-credential", ["git-credential", "get"], request)] {
            let programs = stores.map { Measure.Program(path: agentPath, arguments: command + $0.1, line: line, environment: environment) }
            let starts = Measure.coldStarts(programs + [baseline] + yardsticks.map(\.1), runs: runs)
            let emptyMillis = starts[stores.count].millis
            let others = yardsticks.enumerated().map { (name: $0.element.0, millis: starts[stores.count + 1 + $0.offset].millis) }
            for (i, store) in stores.enumerated() {
                let millis = starts[i].millis
                report.row("start: \(name) (\(store.0))", agent: Report.millis(millis),
                           baseline: Report.millis(emptyMillis) + " (empty)" + others.map { "; " + Report.millis($0.millis) + " (\($0.name))" }.joined(),
                           ratio: String(format: "%.2f× empty", millis / emptyMillis)
                               + others.map { String(format: "; %.2f× \($0.name)", millis / $0.millis) }.joined())
            }
        }
        SocketScenario.run(report: report, agentPath: agentPath, config: file.path, directory: directory, empty: baseline, runs: runs)
    }
}
