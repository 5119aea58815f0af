import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `sign` while a proactive refresh is in flight at a slow issuer: the agent's own
/// dev issuer (a child `auth-agent dev-issuer`) answering the token endpoint after
/// 500 ms. Tokens live 6 s with the default window and margin, so they turn stale
/// at 3 s (effective window 3 s, margin 1.5 s) and one background refresh runs from
/// then for 500 ms. Signs sent one at a time must not wait for it.
enum RefreshScenario {
    static func run(report: Report, agentPath: String) {
        let issuer = DevIssuerChild(agentPath: agentPath)
        defer { issuer.stop() }
        guard let (base, port) = issuer.address else {
            report.row("sign during refresh", agent: "(no dev issuer)", baseline: "", ratio: "")
            return
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-refresh-\(getpid())")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config.json")
        try? Data("""
            {"store": {"kind": "memory"}, "providers": [{"id": "corp", "flow": "password", "origins": ["\(base)"],
             "tokenEndpoint": "\(base)/token", "clientId": "cli"}]}
            """.utf8).write(to: config)
        adminFault(port: port, #"{"accessTokenLifetime":6,"latencyMs":0}"#)
        let agent = ChildProcess(agentPath, ["--config", config.path])
        agent.write(Array(#"{"jsonrpc":"2.0","id":0,"method":"login","params":{"provider":"corp","credentials":{"username":"alice","password":"wonderland"}}}"#.utf8) + [0x0A])
        _ = agent.readLines(1)
        let loggedIn = monotonicNanos()
        adminFault(port: port, #"{"latencyMs":500}"#)
        let sign = Array(#"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"\#(base)/api/me"}}}"#.utf8) + [0x0A]
        var fresh: [Double] = []
        var inFlight: [Double] = []
        while true {
            let t0 = monotonicNanos()
            let since = Double(t0 - loggedIn) / 1e9
            if since >= 4.2 { break }
            agent.write(sign)
            _ = agent.readLines(1)
            let micros = Double(monotonicNanos() - t0) / 1000
            if since >= 0.5 && since < 2.5 { fresh.append(micros) }
            if since >= 3.05 && since < 3.45 { inFlight.append(micros) }  // the refresh is at the issuer
        }
        agent.closeInput()
        _ = agent.wait()
        guard !fresh.isEmpty, !inFlight.isEmpty else { return }
        fresh.sort()
        inFlight.sort()
        let p50 = fresh[fresh.count / 2]
        let p99 = inFlight[inFlight.count * 99 / 100]
        report.row("sign p99, refresh 500 ms", agent: Report.micros(p99), baseline: Report.micros(p50) + " (p50, fresh)",
                   ratio: String(format: "%.2f× p50", p99 / p50))
    }

    /// `POST /_admin/fault` on the dev issuer, over a plain loopback socket.
    static func adminFault(port: Int, _ json: String) {
        guard let fd = loopbackConnection(port: port) else { return }
        defer { close(fd) }
        let request = "POST /_admin/fault HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\nConnection: close\r\n\r\n\(json)"
        _ = Array(request.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
    }
}
