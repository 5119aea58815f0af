import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Drives the built agent over pipes beside baselines measured in the same run:
//   echo  — a minimal line-echo process (this binary with --echo), for throughput and round trip;
//   empty — an empty Foundation program (auth-agent-empty, built beside the agent with the
//           same flags), for cold start and idle memory.
// Figures are printed with their ratios, which hold on a noisy machine where absolutes do not.

let args = Array(CommandLine.arguments.dropFirst())
if args.first == "--stores" {
    let report = Report()
    report.header(agentPath: "(in-process stores)")
    StoreScenario.run(report: report)
    exit(0)
}
if args.first == "--echo" { Echo.run() }
if args.first == "--mcp-translation" {
    let report = Report()
    report.header(agentPath: "(the bridge in-process, before servers in memory)")
    TranslationScenario.run(report: report, calls: args.firstIndex(of: "--calls").flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil } ?? 2000)
    exit(0)
}
/// The value after `flag` in the scenario options (`--agent PATH`, `--rounds N`, …).
func value(_ flag: String) -> String? { args.firstIndex(of: flag).flatMap { $0 + 1 < args.count ? args[$0 + 1] : nil } }
/// `--agent PATH`, else the agent built beside this binary.
func scenarioAgent() -> String {
    value("--agent") ?? URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        .appendingPathComponent("auth-agent").path
}
/// `--mcp-remote PATH`: mcp-remote assembled into one file (Peers/assemble-mcp-remote.sh), to run beside the bridge.
func scenarioMcpRemote() -> String? {
    guard let path = value("--mcp-remote") else { return nil }
    guard FileManager.default.fileExists(atPath: path) else {
        FileHandle.standardError.write(Data("auth-agent-bench: no mcp-remote at \(path); assemble it with Sources/auth-agent-bench/Peers/assemble-mcp-remote.sh\n".utf8))
        exit(2)
    }
    return URL(fileURLWithPath: path).standardizedFileURL.path
}
/// `--python-sdk PYTHON`: a python with the pinned `mcp` installed, to run Peers/python-sdk-proxy.py beside the bridge.
func scenarioPythonSDK() -> String? {
    guard let python = value("--python-sdk") else { return nil }
    guard FileManager.default.isExecutableFile(atPath: python), FileManager.default.fileExists(atPath: BridgeBench.pythonProxy) else {
        FileHandle.standardError.write(Data("auth-agent-bench: no python at \(python) or no proxy at \(BridgeBench.pythonProxy); make one with python3 -m venv V && V/bin/pip install -r Tests/MCP/requirements.txt\n".utf8))
        exit(2)
    }
    return python
}
if args.first == "--mcp" {
    // --mcp URL --config PATH --provider ID [--agent PATH] [--iterations N] [--mcp-remote PATH] [--python-sdk PYTHON]
    guard args.count > 1, let config = value("--config"), let provider = value("--provider") else {
        FileHandle.standardError.write(Data("auth-agent-bench --mcp URL --config PATH --provider ID [--agent PATH] [--iterations N] [--mcp-remote PATH] [--python-sdk PYTHON]\n".utf8))
        exit(2)
    }
    let agent = scenarioAgent()
    let report = Report()
    report.header(agentPath: agent)
    McpScenario.run(report: report, agentPath: agent, url: args[1], config: config, provider: provider,
                    iterations: value("--iterations").flatMap(Int.init) ?? 300, mcpRemote: scenarioMcpRemote(), pythonSDK: scenarioPythonSDK(),
                    sdkHost: value("--sdk-host"))
    report.footer()
    exit(0)
}
if args.first == "--mcp-restart" {
    // --mcp-restart SCRIPT [--agent PATH] [--rounds N] [--mcp-remote PATH] [--python-sdk PYTHON]
    guard args.count > 1 else {
        FileHandle.standardError.write(Data("auth-agent-bench --mcp-restart SCRIPT [--agent PATH] [--rounds N] [--mcp-remote PATH] [--python-sdk PYTHON]\n".utf8))
        exit(2)
    }
    let agent = scenarioAgent()
    let report = Report()
    report.header(agentPath: agent)
    RestartScenario.run(report: report, agentPath: agent, script: args[1], rounds: value("--rounds").flatMap(Int.init) ?? 5,
                        mcpRemote: scenarioMcpRemote(), pythonSDK: scenarioPythonSDK())
    report.footer()
    exit(0)
}
if args.first == "--help" || args.first == "-h" {
    print("""
        Usage: swift run -c release auth-agent-bench [--quick | --helpers | --stores | --dpop] [--sign-vs PATH [--pairs N]] [--agent PATH] [--empty PATH]
        Measures the agent built beside this binary: pipelined throughput, ping-pong round trip,
        cold start and RSS, beside an echo baseline and an empty Foundation program
        (auth-agent-empty). Build with --static-swift-stdlib to measure the static builds.
        --helpers measures only the start-up of `auth-agent token P` and `git-credential get`
        (median of 30 whole-process runs each) beside the empty program and beside an independent
        one (`import Foundation; print("", terminator: "")` compiled here by `swiftc -O -static-stdlib`,
        kept as auth-agent-empty-independent beside the agent) and beside the floor (a program that
        only uses FoundationEssentials and Dispatch once each, kept as auth-agent-floor), with `store.kind: file`
        and with the default configuration (no `store` key); run it without
        DBUS_SESSION_BUS_ADDRESS to measure a machine without a Secret Service.
        --stores measures a session read and write in the file store and, where a Secret Service
        answers on the session bus, in the keyring store (median of 200 each).
        --mcp URL --config PATH --provider ID measures `auth-agent mcp URL` against a running MCP
        server (a tools/call round trip beside a direct POST with the token, p50 and p99 of 300; start-up
        to the first answer; idle RSS). Log in to the provider first.
        --mcp-restart SCRIPT [--rounds N] runs an MCP server with SCRIPT (Tests/MCP/start-server.sh),
        lets a first bridge learn it, restarts it N times (5) with its registrations gone, and times a
        new bridge's first answer after each restart beside the next one's, with the registrations,
        logins and browser openings counted and whether the next call completed; then three bridges
        started together with an empty store.
        --mcp-remote PATH (with --mcp or --mcp-restart) runs mcp-remote, assembled into one file by
        Sources/auth-agent-bench/Peers/assemble-mcp-remote.sh, beside the bridge in the same turns
        (node PATH URL, its tokens in a directory of the bench's), with each figure's ratio.
        --python-sdk PYTHON (with --mcp or --mcp-restart) runs the MCP Python SDK's own OAuth client as a
        stdio proxy (PYTHON Sources/auth-agent-bench/Peers/python-sdk-proxy.py URL --store DIR; PYTHON has
        the pinned `mcp`: python3 -m venv V && V/bin/pip install -r Tests/MCP/requirements.txt) beside
        the bridge and mcp-remote in the same turns, with each figure's ratio.
        --sdk-host PYTHON (with --mcp) also times the tools/calls with the MCP Python SDK as the host
        (Peers/python-sdk-host.py launching each bridge; PYTHON has the pinned `mcp`), three sessions each.
        --mcp-translation [--calls N] measures what translating between MCP revisions adds to a
        tools/call in the bridge itself (in-process, before servers answering from memory): pass-through
        beside an old host before a 2026-07-28 server and a 2026-07-28 host before a session server,
        p50 and p99 of N (2,000) calls each, in turns.
        --dpop measures only sign for a DPoP provider beside sign for the same flow without DPoP.
        --sign-vs PATH [--pairs N] measures the CPU (user + system) of 300,000 plain `sign` lines piped
        into the agent beside the same into the agent at PATH (another build, e.g. an older commit's
        static build), in turns, median of N pairs (11); with --helpers, the helpers' rows follow.
        """)
    exit(0)
}

let selfPath = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
var agentPath = URL(fileURLWithPath: selfPath).deletingLastPathComponent().appendingPathComponent("auth-agent").path
if let i = args.firstIndex(of: "--agent"), i + 1 < args.count { agentPath = args[i + 1] }
var emptyPath = URL(fileURLWithPath: agentPath).deletingLastPathComponent().appendingPathComponent("auth-agent-empty").path
if let i = args.firstIndex(of: "--empty"), i + 1 < args.count { emptyPath = args[i + 1] }
for (what, path) in [("agent", agentPath), ("empty program", emptyPath)] where !FileManager.default.isExecutableFile(atPath: path) {
    FileHandle.standardError.write(Data("auth-agent-bench: no \(what) at \(path); build it first (swift build -c release)\n".utf8))
    exit(2)
}
let quick = args.contains("--quick")
let scale = quick ? 10 : 1

// An empty configuration, so the ping runs measure the engine and log nothing.
let emptyConfig = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-empty-\(getpid()).json")
try? Data(#"{"store": {"kind": "memory"}, "providers": []}"#.utf8).write(to: emptyConfig)
defer { try? FileManager.default.removeItem(at: emptyConfig) }
let pingArgs = ["--config", emptyConfig.path]

let report = Report()
report.header(agentPath: agentPath)

let ping = Array(#"{"jsonrpc":"2.0","method":"ping","id":1}"#.utf8) + [0x0A]
// The start-up baseline: the empty program answering one line.
let empty = Measure.Program(path: emptyPath, arguments: [], line: ping)

if args.contains("--dpop") {
    DPoPScenario.run(report: report, agentPath: agentPath, scale: scale)
    report.footer()
    exit(0)
}

// The plain `sign` path's CPU beside another build's (an older commit's), in turns.
if let i = args.firstIndex(of: "--sign-vs"), i + 1 < args.count {
    let pairs = args.firstIndex(of: "--pairs").flatMap { $0 + 1 < args.count ? Int(args[$0 + 1]) : nil } ?? 11
    SignCPU.run(report: report, agentPath: agentPath, baselinePath: args[i + 1], pairs: pairs)
    if !args.contains("--helpers") {
        report.footer()
        exit(0)
    }
}

if args.contains("--helpers") {
    HelperStart.run(report: report, agentPath: agentPath, empty: empty, independent: IndependentEmpty.foundation.build(beside: agentPath),
                   floor: IndependentEmpty.floor.build(beside: agentPath), runs: 30)
    report.footer()
    exit(0)
}

// Throughput and round trip: ping.
let pingCount = 400_000 / scale
let agentRate = Measure.pipelined(agentPath, pingArgs, line: ping, count: pingCount)
let echoRate = Measure.pipelined(selfPath, ["--echo"], line: ping, count: pingCount)
report.row("pipelined ping", agent: Report.rate(agentRate.rate), baseline: Report.rate(echoRate.rate) + " (echo)",
           ratio: String(format: "%.2f× echo", agentRate.rate / echoRate.rate))
let agentRT = Measure.roundTrip(agentPath, pingArgs, line: ping, iterations: 20_000 / scale)
let echoRT = Measure.roundTrip(selfPath, ["--echo"], line: ping, iterations: 20_000 / scale)
report.row("round trip p50", agent: Report.micros(agentRT.p50), baseline: Report.micros(echoRT.p50) + " (echo)",
           ratio: String(format: "%.2f× echo", agentRT.p50 / echoRT.p50))
report.row("round trip p99", agent: Report.micros(agentRT.p99), baseline: Report.micros(echoRT.p99) + " (echo)",
           ratio: String(format: "%.2f× echo", agentRT.p99 / echoRT.p99))
// Start-up: the agent answering one ping beside the empty program answering one line, in turns.
let starts = Measure.coldStarts([Measure.Program(path: agentPath, arguments: pingArgs, line: ping), empty], runs: 60 / (quick ? 3 : 1))
let (agentStart, emptyStart) = (starts[0], starts[1])
report.row("cold start (ping, \(Report.linking(agentStart)))", agent: Report.millis(agentStart.millis),
           baseline: Report.millis(emptyStart.millis) + " (empty, \(Report.linking(emptyStart)))",
           ratio: String(format: "%.2f× empty", agentStart.millis / emptyStart.millis))
report.row("idle RSS (\(Report.linking(agentStart)))", agent: Report.mebibytes(agentStart.idleKiB),
           baseline: Report.mebibytes(emptyStart.idleKiB) + " (empty, \(Report.linking(emptyStart)))",
           ratio: String(format: "%.2f× empty", Double(agentStart.idleKiB) / Double(emptyStart.idleKiB)))
report.row("peak RSS (ping run)", agent: Report.mebibytes(agentRate.rssKiB), baseline: Report.mebibytes(echoRate.rssKiB) + " (echo)",
           ratio: "")

Scenarios.runSign(report: report, agentPath: agentPath, selfPath: selfPath, scale: scale, echoRate: echoRate.rate,
                  echoP50: echoRT.p50, empty: empty)
HelperStart.run(report: report, agentPath: agentPath, empty: empty, independent: IndependentEmpty.foundation.build(beside: agentPath),
                   floor: IndependentEmpty.floor.build(beside: agentPath), runs: 30)
RefreshScenario.run(report: report, agentPath: agentPath)
DPoPScenario.run(report: report, agentPath: agentPath, scale: scale)
report.footer()
