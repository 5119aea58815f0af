import Foundation

/// `--sign-vs PATH`: the CPU (user + system) an agent spends answering 300,000 plain `sign` lines
/// piped in from a file, beside another build's (`PATH`, e.g. an older commit's static build) on
/// the same machine in the same minutes: in turns, the order alternating, median of `pairs`.
/// CPU rather than wall time, so the figure does not depend on how fast the bench reads.
enum SignCPU {
    static func run(report: Report, agentPath: String, baselinePath: String, pairs: Int, lines: Int = 300_000) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-signcpu-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let login = Array(#"{"jsonrpc":"2.0","id":0,"method":"login","params":{"provider":"bench","credentials":{"token":"bench-token-0123456789"}}}"#.utf8) + [0x0A]
        let sign = #"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"https://api.example.com/v1/items?page=2"}}}"# + "\n"
        let input = directory.appendingPathComponent("signs.jsonl")
        try? Data(String(repeating: sign, count: lines).utf8).write(to: input)
        // Each build with a store of its own, logged in once before it is measured.
        let builds = [agentPath, baselinePath].enumerated().map { i, path -> (String, [String]) in
            let config = directory.appendingPathComponent("config-\(i).json")
            try? Data(#"{"store": {"kind": "file", "path": "\#(directory.appendingPathComponent("store-\(i)").path)"}, "providers": [{"id": "bench", "flow": "token", "origins": ["https://api.example.com"]}]}"#.utf8)
                .write(to: config)
            let child = ChildProcess(path, ["--config", config.path])
            child.write(login)
            _ = child.readLines(1)
            child.closeInput()
            _ = child.wait()
            return (path, ["--config", config.path])
        }
        var seconds: [[Double]] = [[], []]
        var ratios: [Double] = []
        for pair in 0..<pairs {
            var cpu = [0.0, 0.0]
            for i in pair % 2 == 0 ? [0, 1] : [1, 0] { cpu[i] = cpuSeconds(builds[i].0, builds[i].1, input: input.path) }
            seconds[0].append(cpu[0])
            seconds[1].append(cpu[1])
            ratios.append(cpu[0] / cpu[1])
        }
        let (agent, baseline) = (Measure.median(seconds[0]), Measure.median(seconds[1]))
        report.row("sign CPU, \(lines / 1000)k piped", agent: String(format: "%.3f s", agent),
                   baseline: String(format: "%.3f s (%@)", baseline, URL(fileURLWithPath: baselinePath).lastPathComponent),
                   ratio: String(format: "%.2f× (median of %d pairs' ratios)", Measure.median(ratios), pairs))
    }

    /// User + system seconds of one run: stdin from `input`, stdout to /dev/null.
    static func cpuSeconds(_ path: String, _ arguments: [String], input: String) -> Double {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, input, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, path, &actions, nil, argv, environ) == 0 else { return .nan }
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
