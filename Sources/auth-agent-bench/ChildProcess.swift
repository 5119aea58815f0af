#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process with pipes on stdin and stdout, started with posix_spawn so
/// that spawn cost is the process's own, not a wrapper's.
final class ChildProcess: @unchecked Sendable {  // input is written by one thread, output read by another
    let pid: pid_t
    let input: Int32   // we write
    let output: Int32  // we read
    private var pending: [UInt8] = []
    private var readBuffer = [UInt8](repeating: 0, count: 1 << 16)

    /// `errors`: a file its stderr is appended to (a peer's chatty log), else the bench's own stderr.
    init(_ path: String, _ arguments: [String], environment: [String: String] = [:], errors: String? = nil) {
        var toChild: [Int32] = [0, 0]
        var fromChild: [Int32] = [0, 0]
        precondition(pipe(&toChild) == 0 && pipe(&fromChild) == 0, "pipe failed")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        if let errors { posix_spawn_file_actions_addopen(&actions, 2, errors, O_WRONLY | O_CREAT | O_APPEND, 0o600) }
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        var env = ProcessInfo_environment()
        for (k, v) in environment { env[k] = v }
        let envp = env.map { strdup("\($0)=\($1)") } + [nil]
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, nil, argv, envp)
        precondition(rc == 0, "cannot start \(path): \(String(cString: strerror(rc)))")
        posix_spawn_file_actions_destroy(&actions)
        argv.forEach { free($0) }
        envp.forEach { free($0) }
        close(toChild[0])
        close(fromChild[1])
        pid = child
        input = toChild[1]
        output = fromChild[0]
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var off = 0
            while off < raw.count {
                let n = Glibc_write(input, raw.baseAddress! + off, raw.count - off)
                if n <= 0 { if errno == EINTR { continue }; return }
                off += n
            }
        }
    }

    /// Reads until `count` newlines have arrived; returns false at end of output.
    func readLines(_ count: Int) -> Bool {
        var seen = 0
        while seen < count {
            if !pending.isEmpty {
                if let nl = pending.firstIndex(of: 0x0A) {
                    pending.removeSubrange(...nl)
                    seen += 1
                    continue
                }
            }
            let n = readBuffer.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
            if n <= 0 { return false }
            // Count newlines in bulk without copying when nothing is pending.
            if pending.isEmpty {
                var last = -1
                for i in 0..<n where readBuffer[i] == 0x0A {
                    seen += 1
                    last = i
                    if seen == count { break }
                }
                if last + 1 < n { pending.append(contentsOf: readBuffer[(last + 1)..<n]) }
            } else {
                pending.append(contentsOf: readBuffer[0..<n])
            }
        }
        return true
    }

    /// The next line, without its newline; nil at end of output.
    func readLine() -> String? {
        while true {
            if let nl = pending.firstIndex(of: 0x0A) {
                defer { pending.removeSubrange(...nl) }
                return String(decoding: pending[..<nl], as: UTF8.self)
            }
            let n = readBuffer.withUnsafeMutableBytes { read(output, $0.baseAddress!, $0.count) }
            if n <= 0 { return nil }
            pending.append(contentsOf: readBuffer[0..<n])
        }
    }

    func closeInput() { close(input) }

    /// Waits up to `seconds` for exit (a bridge that outlives its closed input: mcp-remote with a stream
    /// open), then kills it; returns (status, peak RSS in KiB).
    func wait(within seconds: Int) -> (Int32, Int) {
        var status: Int32 = 0
        var usage = rusage()
        for _ in 0..<(seconds * 20) {
            if wait4(pid, &status, WNOHANG, &usage) == pid {
                close(output)
                return (status, Int(usage.ru_maxrss))
            }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        return wait()
    }

    /// Waits for exit; returns (status, peak RSS in KiB).
    func wait() -> (Int32, Int) {
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        close(output)
        return (status, Int(usage.ru_maxrss))
    }
}

@inline(__always) func Glibc_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}

func ProcessInfo_environment() -> [String: String] {
    var env: [String: String] = [:]
    var p = environ
    while let entry = p.pointee {
        let s = String(cString: entry)
        if let eq = s.firstIndex(of: "=") { env[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
        p += 1
    }
    return env
}

/// A TCP connection to 127.0.0.1:`port` (the caller closes it); nil when refused.
func loopbackConnection(port: Int) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}

func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A child `auth-agent dev-issuer`, for the scenarios that need a token endpoint, and the base URL
/// and port its first line names (nil when it printed none).
struct DevIssuerChild {
    let process: ChildProcess
    let address: (base: String, port: Int)?

    init(agentPath: String) {
        process = ChildProcess(agentPath, ["dev-issuer"])
        if let line = process.readLine(), let base = line.split(separator: "\"").dropFirst(3).first.map(String.init),
           let port = base.split(separator: ":").last.flatMap({ Int($0) }) {
            address = (base, port)
        } else {
            address = nil
        }
    }

    func stop() {
        process.closeInput()
        _ = process.wait()
    }
}
