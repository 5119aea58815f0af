import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket agent (`serve --socket`) on the helpers' store: `token` and `git-credential get`
/// through it beside the same commands on the file store (in turns), pipelined `sign` on 8
/// connections at once, and its resident memory with 32 idle connections.
enum SocketScenario {
    static func run(report: Report, agentPath: String, config: String, directory: URL, empty: Measure.Program, runs: Int) {
        let path = directory.appendingPathComponent("run/agent.sock").path
        let agent = ChildProcess(agentPath, ["serve", "--socket", path, "--config", config])
        defer {
            kill(agent.pid, SIGTERM)
            _ = agent.wait()
        }
        var ready = false
        for _ in 0..<500 where !ready {
            if let fd = connect(path) { close(fd); ready = true } else { usleep(10_000) }
        }
        guard ready else {
            report.row("socket agent", agent: "did not start", baseline: "", ratio: "")
            return
        }
        let socket = ["AUTH_AGENT_SOCK": path]
        let args = ["--config", config]
        let token = Measure.coldStarts([Measure.Program(path: agentPath, arguments: ["token", "bench"], line: [], environment: socket),
                                        Measure.Program(path: agentPath, arguments: ["token", "bench"] + args, line: []), empty], runs: runs)
        report.row("start: token (socket)", agent: Report.millis(token[0].millis), baseline: Report.millis(token[1].millis) + " (file store)",
                   ratio: String(format: "%.2f× file, %.2f× empty", token[0].millis / token[1].millis, token[0].millis / token[2].millis))
        let request = Array("protocol=https\nhost=git.example.com\npath=repo.git\n\n".utf8)
        let git = Measure.coldStarts([Measure.Program(path: agentPath, arguments: ["git-credential", "get"], line: request, environment: socket), empty],
                                     runs: runs)
        report.row("start: git (socket)", agent: Report.millis(git[0].millis), baseline: Report.millis(git[1].millis) + " (empty)",
                   ratio: String(format: "%.2f× empty", git[0].millis / git[1].millis))

        let perConnection = 100_000
        let sign = Array(#"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"https://git.example.com/r"}}}"#.utf8) + [0x0A]
        let rate = pipelined(path, line: sign, connections: 8, count: perConnection)
        report.row("socket sign, 8 conns", agent: Report.rate(rate), baseline: "", ratio: "target ≥ 400k/s")

        let idle = (0..<32).compactMap { _ in connect(path) }
        defer { idle.forEach { close($0) } }
        let ping = Array(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.utf8) + [0x0A]
        for fd in idle { _ = send(fd, ping); _ = readLines(fd, 1) }
        usleep(200_000)
        report.row("socket RSS, \(idle.count) idle", agent: Report.mebibytes(Measure.residentKiB(agent.pid)), baseline: "", ratio: "")
    }

    /// Signs per second over `connections` connections, each sending `count` lines at once
    /// (a writer thread) while its answers are read.
    private static func pipelined(_ path: String, line: [UInt8], connections: Int, count: Int) -> Double {
        let fds = (0..<connections).compactMap { _ in connect(path) }
        defer { fds.forEach { close($0) } }
        let batch = [UInt8]((0..<1000).flatMap { _ in line })
        let group = DispatchGroup()
        let t0 = DispatchTime.now().uptimeNanoseconds
        for fd in fds {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<(count / 1000) { _ = send(fd, batch) }
            }
            Thread.detachNewThread {
                _ = readLines(fd, count)
                group.leave()
            }
        }
        group.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9
        return Double(fds.count * count) / seconds
    }

    private static func connect(_ path: String) -> Int32? {
        #if canImport(Glibc)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_UNIX, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connectSocket(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if ok != 0 { close(fd); return nil }
        return fd
    }

    private static func send(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                offset += n
            }
            return true
        }
    }

    private static func readLines(_ fd: Int32, _ count: Int) -> Bool {
        var seen = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while seen < count {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            for i in 0..<n where buffer[i] == 0x0A { seen += 1 }
        }
        return true
    }
}

/// `connect(2)`, which `SocketScenario.connect` shadows inside the type.
private func connectSocket(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 { connect(fd, address, length) }
