import Foundation

/// Prints the figures as an aligned table.
final class Report {
    func header(agentPath: String) {
        print("auth-agent benchmark — \(ProcessInfo.processInfo.activeProcessorCount) cores, agent \(agentPath)")
        print(pad("measure", 24) + pad("agent", 16) + pad("baseline", 26) + "ratio")
    }

    func row(_ name: String, agent: String, baseline: String, ratio: String) {
        print(pad(name, 24) + pad(agent, 16) + pad(baseline, 26) + ratio)
    }

    func footer() {
        print("targets: pipelined ping ≥ 300k/s, sign ≥ 250k/s; round trip p50 ≤ 2× echo; static build: cold start "
              + "≤ 1.2×, token P ≤ 1.3×, helper start ≤ 1.5×, idle RSS ≤ 1.3× the static empty Foundation program")
    }

    private func pad(_ s: String, _ n: Int) -> String {
        s.count >= n ? s + " " : s + String(repeating: " ", count: n - s.count)
    }

    static func rate(_ r: Double) -> String { String(format: "%.0fk/s", r / 1000) }
    static func micros(_ us: Double) -> String { String(format: "%.1f µs", us) }
    static func millis(_ ms: Double) -> String { String(format: "%.2f ms", ms) }
    /// How the Swift runtime and Foundation reach the program: linked in, or loaded.
    static func linking(_ start: Measure.Start) -> String { start.staticSwift ? "static" : "dynamic" }
    static func mebibytes(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
}
