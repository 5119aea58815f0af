import Foundation
import JSON
import TestSupport
import XCTest

/// The agent must not crash, hang or grow without bound on hostile input, and
/// must keep serving after it.
final class HostileInputTests: XCTestCase {
    private func assertStillServing(_ agent: AgentProcess, file: StaticString = #filePath, line: UInt = #line) throws {
        try agent.send(#"{"jsonrpc":"2.0","method":"ping","id":"alive"}"#)
        var last: JSONValue?
        while let data = agent.nextLine(timeout: 10) {
            last = try JSONParser.parse([UInt8](data))
            if last?["id"] == "alive" { break }
        }
        XCTAssertEqual(last, ["jsonrpc": "2.0", "id": "alive", "result": [:]], file: file, line: line)
    }

    private func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "")
        }
        return nil
    }

    func testTenMegabyteLineIsRejectedWithoutBufferingIt() throws {
        let agent = try AgentProcess(arguments: [])
        let big = Data(repeating: UInt8(ascii: "a"), count: 10 << 20)
        try agent.send(big)
        let answer = try JSONParser.parse([UInt8](XCTUnwrap(agent.nextLine(timeout: 10))))
        XCTAssertEqual(answer["error"]?["code"], -32600)
        XCTAssertEqual(answer["id"], .null)
        if let rss = residentKiB(agent.process.processIdentifier) {
            XCTAssertLessThan(rss, 40 * 1024, "a 10 MB line left the agent at \(rss) KiB resident")
        }
        try assertStillServing(agent)
    }

    func testDeepNestingAndHugeBatch() throws {
        let agent = try AgentProcess(arguments: ["--max-message-bytes", "16777216"])
        try agent.send(String(repeating: "[", count: 100_000))
        XCTAssertEqual(try JSONParser.parse([UInt8](XCTUnwrap(agent.nextLine(timeout: 10))))["error"]?["code"], -32700)
        try agent.send(String(repeating: "{\"a\":", count: 100_000))
        XCTAssertEqual(try JSONParser.parse([UInt8](XCTUnwrap(agent.nextLine(timeout: 10))))["error"]?["code"], -32700)
        let batch = "[" + (0..<100_000).map { #"{"jsonrpc":"2.0","method":"ping","id":\#($0)}"# }.joined(separator: ",") + "]"
        try agent.send(batch)
        let answer = try JSONParser.parse([UInt8](XCTUnwrap(agent.nextLine(timeout: 10))))
        XCTAssertEqual(answer["error"]?["code"], -32600)
        XCTAssertEqual(answer["error"]?["message"], "Invalid Request: batch of 100000 messages; at most 1000 are accepted")
        // The largest accepted batch is answered in full.
        let full = "[" + (0..<1000).map { #"{"jsonrpc":"2.0","method":"ping","id":\#($0)}"# }.joined(separator: ",") + "]"
        try agent.send(full)
        XCTAssertEqual(try JSONParser.parse([UInt8](XCTUnwrap(agent.nextLine(timeout: 10)))).arrayValue?.count, 1000)
        try assertStillServing(agent)
    }

    /// A host that stops reading ends the agent quietly (exit 0, nothing on stderr),
    /// while its input is still open. A shell pipeline, so no other process holds
    /// the pipe's read end.
    func testClosedStdoutEndsTheProcessQuietly() throws {
        let dir = try TemporaryDirectory(prefix: "auth-agent-epipe").url
        defer { try? FileManager.default.removeItem(at: dir) }
        let rc = dir.appendingPathComponent("rc").path
        let err = dir.appendingPathComponent("err").path
        let ping = #"{"jsonrpc":"2.0","method":"ping","id":1}"#
        let config = dir.appendingPathComponent("config.json").path
        try Data(#"{"store": {"kind": "memory"}, "providers": []}"#.utf8).write(to: URL(fileURLWithPath: config))
        let script = """
            (for i in $(seq 1 100); do echo '\(ping)'; sleep 0.05; done) \
              | { "$AGENT" --config "\(config)" 2>"\(err)"; echo $? > "\(rc).tmp"; mv "\(rc).tmp" "\(rc)"; } | head -c 10 >/dev/null
            """
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = ["-c", script]
        shell.environment = ["AGENT": AgentProcess.binaryURL.path, "PATH": "/usr/bin:/bin"]
        let started = Date()
        try shell.run()
        defer { if shell.isRunning { shell.terminate() } }
        while !FileManager.default.fileExists(atPath: rc) && Date().timeIntervalSince(started) < 4 { usleep(20_000) }
        let elapsed = Date().timeIntervalSince(started)
        XCTAssertLessThan(elapsed, 4, "the agent kept running after its reader went away")
        XCTAssertEqual(try String(contentsOfFile: rc, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines), "0")
        XCTAssertEqual(try String(contentsOfFile: err, encoding: .utf8), "", "nothing on stderr")
    }

    func testRandomBytes() throws {
        let agent = try AgentProcess(arguments: [])
        var rng = SeededGenerator(seed: 7)
        var bytes = [UInt8](repeating: 0, count: 1 << 20)
        for i in bytes.indices { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
        try agent.send(Data(bytes))
        try assertStillServing(agent)
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0)
    }

    /// Random and mutated lines: no crash, and every request with a valid id
    /// gets exactly one answer.
    func testFuzzEveryValidRequestAnsweredExactlyOnce() throws {
        let agent = try AgentProcess(arguments: [])
        var rng = SeededGenerator(seed: UInt64(ProcessInfo.processInfo.environment["FUZZ_SEED"].flatMap { UInt64($0) } ?? 20261122))
        let templates = [
            #"{"jsonrpc":"2.0","method":"ping","id":"ID"}"#,
            #"{"jsonrpc":"2.0","method":"initialize","params":{"clientInfo":{"name":"fuzz"}},"id":"ID"}"#,
            #"{"jsonrpc":"2.0","method":"nope","params":{"a":[1,2,{"b":null}]},"id":"ID"}"#,
            #"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"ID"}}"#,
            #"[{"jsonrpc":"2.0","method":"ping","id":"ID"}]"#,
        ]
        var intact: Set<String> = []
        var mutated: Set<String> = []
        var payload = Data()
        for i in 0..<3000 {
            let kind = Int.random(in: 0..<10, using: &rng)
            if kind < 4 {
                let t = templates[Int.random(in: 0..<templates.count, using: &rng)]
                if !t.contains("cancelRequest") { intact.insert("u\(i)") }
                payload.append(contentsOf: t.replacingOccurrences(of: "ID", with: "u\(i)").utf8)
            } else if kind < 8 {
                var b = Array(templates[Int.random(in: 0..<templates.count, using: &rng)].replacingOccurrences(of: "ID", with: "m\(i)").utf8)
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let at = Int.random(in: 0..<b.count, using: &rng)
                    switch Int.random(in: 0..<4, using: &rng) {
                    case 0: b[at] = UInt8.random(in: 0...255, using: &rng)
                    case 1: b.remove(at: at)
                    case 2: b.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                    default: b = Array(b[..<at])
                    }
                    if b.isEmpty { b = [UInt8(ascii: "{")] }
                }
                mutated.insert("m\(i)")
                payload.append(contentsOf: b.map { $0 == 0x0A ? 0x20 : $0 })
            } else {
                payload.append(contentsOf: (0..<Int.random(in: 1..<200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }.map { $0 == 0x0A ? 0x21 : $0 })
            }
            payload.append(0x0A)
        }
        try agent.send(payload)
        try agent.send(#"{"jsonrpc":"2.0","method":"ping","id":"end"}"#)
        var answers: [String: Int] = [:]
        var sawEnd = false
        let deadline = Date().addingTimeInterval(30)
        while !sawEnd, Date() < deadline, let line = agent.nextLine(timeout: 10) {
            let message = try JSONParser.parse([UInt8](line))
            let items = message.arrayValue ?? [message]
            for item in items {
                XCTAssertEqual(item["jsonrpc"], "2.0")
                XCTAssertTrue((item["result"] == nil) != (item["error"] == nil), "\(item)")
                if let id = item["id"]?.stringValue {
                    answers[id, default: 0] += 1
                    if id == "end" { sawEnd = true }
                }
            }
        }
        XCTAssertTrue(sawEnd, "the agent stopped answering")
        for id in intact { XCTAssertEqual(answers[id], 1, "request \(id) answered \(answers[id] ?? 0) times") }
        for (id, n) in answers where mutated.contains(id) { XCTAssertLessThanOrEqual(n, 1, "\(id) answered \(n) times") }
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0)
    }
}

/// SplitMix64: reproducible randomness for fuzzing (set FUZZ_SEED to vary it).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
