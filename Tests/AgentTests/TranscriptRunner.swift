import Foundation
import JSON
import XCTest

/// Plays one transcript against a freshly spawned agent and reports every
/// difference at the transcript's own file and line.
struct TranscriptRunner {
    static let directory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Transcripts")

    static func allFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "txt" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Substitutions for `${NAME}` in `!config` and `-->` lines (issuer URL, temp dir).
    var variables: [String: String] = [:]
    var environment: [String: String] = [:]
    var readTimeout = 10.0
    /// Called with every message the agent sends, for schema validation.
    var inspect: ((JSONValue, String) -> String?)?

    struct Failure: Error, CustomStringConvertible {
        let file: String
        let line: Int
        let message: String
        var description: String { "\(file):\(line): \(message)" }
    }

    func run(_ url: URL) throws {
        let name = url.lastPathComponent
        let transcript = try Transcript(text: String(contentsOf: url, encoding: .utf8), file: name)
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-transcript-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        var vars = variables
        vars["TMP"] = tmp.path
        func expand(_ s: String) -> String {
            var out = s
            for (k, v) in vars { out = out.replacingOccurrences(of: "${\(k)}", with: v) }
            return out
        }
        var args = transcript.arguments.map(expand)
        if let config = transcript.config {
            let path = tmp.appendingPathComponent("config.json")
            try Data(expand(config).utf8).write(to: path)
            args += ["--config", path.path]
        }
        var env = environment
        env["XDG_STATE_HOME"] = env["XDG_STATE_HOME"] ?? tmp.appendingPathComponent("state").path
        env["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"] ?? tmp.appendingPathComponent("config").path
        let agent = try AgentProcess(arguments: args, environment: env)
        defer { agent.kill() }

        var matcher = JSONMatcher()
        var exitExpected = false
        func fail(_ line: Int, _ message: String) -> Failure {
            Failure(file: name, line: line, message: message + (agent.stderr.isEmpty ? "" : "\n  agent stderr:\n" + agent.stderr))
        }
        func receive(_ line: Int) throws -> (JSONValue, String) {
            guard let data = agent.nextLine(timeout: readTimeout) else {
                throw fail(line, "no message from the agent within \(readTimeout) s")
            }
            let text = String(decoding: data, as: UTF8.self)
            let value: JSONValue
            do { value = try JSONParser.parse([UInt8](data)) } catch {
                throw fail(line, "the agent wrote a line that is not JSON (\(error)): \(text)")
            }
            if let problem = inspect?(value, text) { throw fail(line, "schema: \(problem)\n  message: \(text)") }
            return (value, text)
        }
        func parseExpected(_ text: String, _ line: Int) throws -> JSONValue {
            do { return try JSONParser.parse(expand(text)) } catch { throw fail(line, "expected line is not JSON: \(error)") }
        }

        for step in transcript.steps {
            switch step.step {
            case .send(let text):
                try agent.send(Transcript.bytes(ofSent: matcher.substitute(expand(text))))
            case .sendLarge(let size):
                let head = #"{"jsonrpc":"2.0","method":"ping","id":"large","params":{"pad":""#
                let tail = #""}}"#
                let pad = max(0, size - head.utf8.count - tail.utf8.count)
                try agent.send(head + String(repeating: "x", count: pad) + tail)
            case .expect(let text):
                let expected = try parseExpected(text, step.number)
                let (actual, raw) = try receive(step.number)
                if let why = matcher.mismatch(expected: expected, actual: actual) {
                    throw fail(step.number, "mismatch at \(why)\n  expected: \(text)\n  actual:   \(raw)")
                }
            case .expectAnyOrder(let texts):
                var expected = try texts.map { try parseExpected($0, step.number) }
                var received: [String] = []
                while !expected.isEmpty {
                    let (actual, raw) = try receive(step.number)
                    received.append(raw)
                    let saved = matcher
                    guard let i = expected.indices.first(where: { i in
                        matcher = saved
                        return matcher.mismatch(expected: expected[i], actual: actual) == nil
                    }) else {
                        throw fail(step.number, "no expected message in the group matches\n  actual: \(raw)\n  group:\n    " + texts.joined(separator: "\n    "))
                    }
                    matcher = saved
                    _ = matcher.mismatch(expected: expected[i], actual: actual)
                    expected.remove(at: i)
                }
            case .close:
                agent.closeInput()
            case .exit(let code):
                agent.closeInput()
                guard let status = agent.waitForExit(timeout: readTimeout) else { throw fail(step.number, "the agent did not exit") }
                if status != code { throw fail(step.number, "exit code \(status), expected \(code)") }
                exitExpected = true
            case .stderrContains(let text):
                let deadline = Date().addingTimeInterval(readTimeout)
                while !agent.stderr.contains(expand(text)) && Date() < deadline { usleep(10_000) }
                if !agent.stderr.contains(expand(text)) { throw fail(step.number, "stderr does not contain \"\(text)\"") }
            case .sleep(let seconds):
                usleep(UInt32(seconds * 1_000_000))
            case .signal(let sig):
                kill(agent.process.processIdentifier, sig)
            }
        }
        // Whatever the agent says after the last expectation is a failure: nothing may go unanswered or extra.
        agent.closeInput()
        while let extra = agent.nextLine(timeout: readTimeout) {
            throw fail(transcript.steps.last?.number ?? 0, "unexpected message after the transcript ended: \(String(decoding: extra, as: UTF8.self))")
        }
        if !exitExpected {
            guard let status = agent.waitForExit(timeout: readTimeout) else {
                throw fail(transcript.steps.last?.number ?? 0, "the agent did not exit after end of input")
            }
            if status != 0 { throw fail(transcript.steps.last?.number ?? 0, "exit code \(status) after end of input, expected 0") }
        }
    }
}
