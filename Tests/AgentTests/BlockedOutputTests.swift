import Foundation
import JSON
import XCTest

/// A host that stops reading the agent's stdout: the agent must still end on
/// SIGTERM within its grace, and must wait for a full non-blocking stdout
/// without burning a core. And an empty non-blocking stdin is waited for, not
/// taken for the end of input.
final class BlockedOutputTests: XCTestCase {
    /// Enough answers of about 1 KiB each to fill any pipe's buffer several times over.
    private static let pings = 400
    private static let idPadding = String(repeating: "x", count: 1000)

    private func spawnFlooded(nonBlockingOutput: Bool) throws -> (AgentHarness, AgentProcess) {
        let harness = try AgentHarness()
        let agent = try AgentProcess(arguments: ["--config", harness.configPath.path], environment: ["XDG_STATE_HOME": harness.directory.path],
                                     readsOutput: false, nonBlockingOutput: nonBlockingOutput)
        let pid = agent.process.processIdentifier
        addTeardownBlock { kill(pid, SIGKILL) }
        // From another thread: once the agent is blocked on its output it stops reading, and so would this write.
        Thread.detachNewThread {
            for i in 0..<Self.pings {
                do {
                    try agent.send(#"{"jsonrpc":"2.0","method":"ping","id":"\#(i)-\#(Self.idPadding)"}"#)
                } catch { return }
            }
        }
        let unread = waitForFullOutput(agent)
        XCTAssertGreaterThan(unread, 0, "the agent answered nothing")
        XCTAssertLessThan(unread, Self.pings * Self.idPadding.count, "every answer fit in the pipe; the agent was never blocked")
        return (harness, agent)
    }

    /// Waits (at most 10 s) until the unread output stops growing: the pipe is full and the agent blocked on it.
    private func waitForFullOutput(_ agent: AgentProcess) -> Int {
        var last = -1
        var stableSamples = 0
        var samples = 0
        while stableSamples < 3 && samples < 100 {
            usleep(100_000)
            samples += 1
            let now = agent.unreadOutputBytes
            stableSamples = now > 0 && now == last ? stableSamples + 1 : 0
            last = now
        }
        return last
    }

    func testSigtermEndsAnAgentWhoseHostStoppedReading() throws {
        let (_, agent) = try spawnFlooded(nonBlockingOutput: false)
        let start = Date()
        kill(agent.process.processIdentifier, SIGTERM)
        let status = agent.waitForExit(timeout: 8)
        XCTAssertEqual(status, 0, "still running \(Date().timeIntervalSince(start)) s after SIGTERM; stderr:\n\(agent.stderr)")
    }

    func testFullNonBlockingOutputIsWaitedForWithoutSpinning() throws {
        #if os(Linux)
        let (_, agent) = try spawnFlooded(nonBlockingOutput: true)
        let pid = agent.process.processIdentifier
        let before = try cpuSeconds(pid)
        usleep(1_000_000)
        let used = try cpuSeconds(pid) - before
        XCTAssertLessThan(used, 0.3, "the agent used \(used) s of CPU in 1 s while its output was full")

        agent.startReadingOutput()
        var ids = Set<String>()
        while ids.count < Self.pings, let line = agent.nextLine(timeout: 10) {
            let message = try JSONParser.parse([UInt8](line))
            XCTAssertEqual(message["result"], [:])
            if case .string(let id)? = message["id"] { ids.insert(id) }
        }
        XCTAssertEqual(ids.count, Self.pings, "every ping is answered once the host reads again")
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0)
        #else
        throw XCTSkip("reads CPU time from /proc")
        #endif
    }

    func testNonBlockingInputIsWaitedFor() throws {
        let harness = try AgentHarness()
        let agent = try AgentProcess(arguments: ["--config", harness.configPath.path], environment: ["XDG_STATE_HOME": harness.directory.path],
                                     nonBlockingInput: true)
        usleep(300_000)
        XCTAssertEqual(try agent.call("ping", id: 1), ["jsonrpc": "2.0", "id": 1, "result": [:]], "an empty non-blocking stdin is not the end of input")
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0)
    }

    /// User plus system CPU time of a process so far, from /proc/PID/stat.
    private func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // Fields after the command name (which may hold spaces), which ends at the last ')'.
        let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
        let ticks = Double(fields[11])! + Double(fields[12])!
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
