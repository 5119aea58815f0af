import Foundation

/// `sign` for a DPoP provider (a fresh ES256 proof per call) beside `sign` for the
/// same flow without DPoP, in one run against the agent's own dev issuer (a child
/// `auth-agent dev-issuer`): two password providers on two origins of that issuer,
/// one with `dpop: true`. The issue asks for ≥ 30k/s pipelined and a round-trip
/// p50 within 2× plain `sign`'s.
enum DPoPScenario {
    static func run(report: Report, agentPath: String, scale: Int) {
        let issuer = DevIssuerChild(agentPath: agentPath)
        defer { issuer.stop() }
        guard let (base, port) = issuer.address else {
            report.row("pipelined DPoP sign", agent: "(no dev issuer)", baseline: "", ratio: "")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-dpop-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.json")
        let plainOrigin = "http://localhost:\(port)"
        try? Data("""
            {"store": {"kind": "memory"}, "providers": [
             {"id": "dpop", "flow": "password", "origins": ["\(base)"], "tokenEndpoint": "\(base)/token", "clientId": "cli", "dpop": true},
             {"id": "plain", "flow": "password", "origins": ["\(plainOrigin)"], "tokenEndpoint": "\(base)/token", "clientId": "cli"}]}
            """.utf8).write(to: config)
        let args = ["--config", config.path]
        func login(_ provider: String) -> [UInt8] {
            Array(#"{"jsonrpc":"2.0","id":0,"method":"login","params":{"provider":"\#(provider)","credentials":{"username":"alice","password":"wonderland"}}}"#.utf8) + [0x0A]
        }
        func sign(_ origin: String) -> [UInt8] {
            Array(#"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"\#(origin)/api/items?page=2"}}}"#.utf8) + [0x0A]
        }
        let prologue = [login("dpop"), login("plain")]
        let plainRate = Measure.pipelined(agentPath, args, line: sign(plainOrigin), count: 300_000 / scale, prologue: prologue)
        let dpopRate = Measure.pipelined(agentPath, args, line: sign(base), count: 100_000 / scale, prologue: prologue)
        report.row("pipelined DPoP sign", agent: Report.rate(dpopRate.rate), baseline: Report.rate(plainRate.rate) + " (plain sign)",
                   ratio: String(format: "%.2f× plain", dpopRate.rate / plainRate.rate))
        let plainRT = Measure.roundTrip(agentPath, args, line: sign(plainOrigin), iterations: 20_000 / scale, prologue: prologue)
        let dpopRT = Measure.roundTrip(agentPath, args, line: sign(base), iterations: 20_000 / scale, prologue: prologue)
        report.row("DPoP sign round trip p50", agent: Report.micros(dpopRT.p50), baseline: Report.micros(plainRT.p50) + " (plain sign)",
                   ratio: String(format: "%.2f× plain", dpopRT.p50 / plainRT.p50))
    }
}
