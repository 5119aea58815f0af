import Foundation

/// The three measurements, each against any line-oriented child process.
enum Measure {
    struct Throughput {
        let rate: Double
        let rssKiB: Int
    }

    /// Writes `count` copies of `line` from a second thread while reading the
    /// answers; messages per second from first write to last answer.
    static func pipelined(_ path: String, _ arguments: [String], line: [UInt8], count: Int,
                          environment: [String: String] = [:], prologue: [[UInt8]] = []) -> Throughput
    {
        let child = ChildProcess(path, arguments, environment: environment)
        for p in prologue {
            child.write(p)
            _ = child.readLines(1)
        }
        // Warm up.
        child.write(Array([[UInt8]](repeating: line, count: 1000).joined()))
        _ = child.readLines(1000)
        let chunk = Array([[UInt8]](repeating: line, count: 1000).joined())
        let start = monotonicNanos()
        let writer = Thread {
            for _ in 0..<(count / 1000) { child.write(chunk) }
        }
        writer.start()
        let ok = child.readLines(count / 1000 * 1000)
        let elapsed = Double(monotonicNanos() - start) / 1e9
        child.closeInput()
        let (_, rss) = child.wait()
        precondition(ok, "\(path) stopped answering")
        return Throughput(rate: Double(count / 1000 * 1000) / elapsed, rssKiB: rss)
    }

    struct Latency {
        let p50: Double  // microseconds
        let p99: Double
    }

    /// One message at a time: write, wait for the answer, repeat.
    static func roundTrip(_ path: String, _ arguments: [String], line: [UInt8], iterations: Int,
                          environment: [String: String] = [:], prologue: [[UInt8]] = []) -> Latency
    {
        let child = ChildProcess(path, arguments, environment: environment)
        for p in prologue {
            child.write(p)
            _ = child.readLines(1)
        }
        for _ in 0..<500 {
            child.write(line)
            _ = child.readLines(1)
        }
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let t0 = monotonicNanos()
            child.write(line)
            _ = child.readLines(1)
            samples.append(Double(monotonicNanos() - t0) / 1000)
        }
        child.closeInput()
        _ = child.wait()
        samples.sort()
        return Latency(p50: samples[samples.count / 2], p99: samples[samples.count * 99 / 100])
    }

    /// A program started for one answer: its path, arguments, and what it is sent
    /// first (nothing, for a command that answers its arguments).
    struct Program {
        let path: String
        let arguments: [String]
        let line: [UInt8]
        /// Added to (or replacing in) the bench's own environment.
        var environment: [String: String] = [:]
    }

    struct Start {
        /// Median milliseconds from spawn to exit, through one answer.
        let millis: Double
        /// Median resident memory once the first answer is out, while idle.
        let idleKiB: Int
        /// Whether the Swift runtime is linked in (`--static-swift-stdlib`) rather than loaded.
        let staticSwift: Bool
    }

    /// Cold starts: spawn, its line, one line of answer, end of input, exit. The programs
    /// take turns run by run (A B A B …), so the machine's load falls on each alike
    /// and their ratio holds where absolute figures drift.
    static func coldStarts(_ programs: [Program], runs: Int) -> [Start] {
        var times = [[Double]](repeating: [], count: programs.count)
        var resident = [[Int]](repeating: [], count: programs.count)
        var staticSwift = [Bool](repeating: true, count: programs.count)
        for run in 0..<runs {
            for (i, program) in programs.enumerated() {
                let t0 = monotonicNanos()
                let child = ChildProcess(program.path, program.arguments, environment: program.environment)
                if !program.line.isEmpty { child.write(program.line) }
                _ = child.readLines(1)
                let r0 = monotonicNanos()
                resident[i].append(residentKiB(child.pid))
                if run == 0 { staticSwift[i] = !maps(child.pid, library: "libswiftCore.so") }
                let reading = monotonicNanos() - r0  // not the program's time
                child.closeInput()
                _ = child.wait()
                times[i].append(Double(monotonicNanos() - t0 - reading) / 1e6)
            }
        }
        return programs.indices.map { Start(millis: median(times[$0]), idleKiB: median(resident[$0]), staticSwift: staticSwift[$0]) }
    }

    static func median<T: Comparable>(_ samples: [T]) -> T { samples.sorted()[samples.count / 2] }

    /// Resident memory of a running process, from /proc.
    static func residentKiB(_ pid: pid_t) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// Whether a running process has a library of that name mapped.
    static func maps(_ pid: pid_t, library: String) -> Bool {
        (try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8))?.contains("/" + library) ?? false
    }
}
