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

    /// Median milliseconds from spawn to exit; with `line`, the first answer to
    /// it is awaited and stdin closed in between.
    static func coldStart(_ path: String, _ arguments: [String], line: [UInt8]?, runs: Int,
                          environment: [String: String] = [:]) -> Double
    {
        var samples: [Double] = []
        for _ in 0..<runs {
            let t0 = monotonicNanos()
            let child = ChildProcess(path, arguments, environment: environment)
            if let line {
                child.write(line)
                _ = child.readLines(1)
            }
            child.closeInput()
            _ = child.wait()
            samples.append(Double(monotonicNanos() - t0) / 1e6)
        }
        samples.sort()
        return samples[samples.count / 2]
    }
}
