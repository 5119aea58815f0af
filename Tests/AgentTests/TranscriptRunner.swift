import DevIssuer
import Foundation
import JSON
import TestSupport
import XCTest

/// Plays one transcript against a fresh agent — the built binary, or the same wiring in this
/// process on a clock that `!advance` moves — and reports every difference at the transcript's
/// own file and line.
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
    /// How long the in-process agent writes nothing before a wait for its next line counts as idle.
    static let idle = 0.1
    /// Every message the agent sends is validated against schema/openrpc.json.
    var schema: SchemaValidator?
    /// The agent in this process, with the dev issuer on the same `VirtualClock`; else the built binary.
    var inProcess = false

    struct Failure: Error, CustomStringConvertible {
        let file: String
        let line: Int
        let message: String
        var description: String { "\(file):\(line): \(message)" }
    }

    func run(_ url: URL) throws {
        let name = url.lastPathComponent
        let transcript = try Transcript(text: String(contentsOf: url, encoding: .utf8), file: name)
        let tmp = try TemporaryDirectory(prefix: "auth-agent-transcript").url
        defer { try? FileManager.default.removeItem(at: tmp) }
        let clock = VirtualClock()
        let issuer = inProcess ? DevIssuer(now: { clock.now() }) : DevIssuer()
        _ = try issuer.start(port: 0)
        defer { issuer.stop() }
        var vars = variables
        vars["TMP"] = tmp.path
        vars["ISSUER"] = issuer.baseURL
        vars["ISSUER_PORT"] = String(issuer.port)
        func expand(_ s: String) -> String {
            var out = s
            for (k, v) in vars { out = out.replacingOccurrences(of: "${\(k)}", with: v) }
            return out
        }
        var args = transcript.arguments.map(expand)
        if var config = transcript.config {
            if config.hasPrefix("@") {
                // A shared configuration: Tests/Transcripts/configs/NAME.json
                config = try String(contentsOf: Self.directory.appendingPathComponent("configs/\(config.dropFirst()).json"), encoding: .utf8)
            }
            let path = tmp.appendingPathComponent("config.json")
            try Data(expand(config).utf8).write(to: path)
            args += ["--config", path.path]
        }
        var env = environment
        env["XDG_STATE_HOME"] = env["XDG_STATE_HOME"] ?? tmp.appendingPathComponent("state").path
        env["XDG_CONFIG_HOME"] = env["XDG_CONFIG_HOME"] ?? tmp.appendingPathComponent("config").path
        for f in transcript.files {
            let url = tmp.appendingPathComponent(f.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(expand(f.content).utf8).write(to: url)
        }
        for link in transcript.symlinks {
            let url = tmp.appendingPathComponent(link.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: expand(link.target))
        }
        let inProcess = self.inProcess
        func start() throws -> any TranscriptAgent {
            guard inProcess else { return try AgentProcess(arguments: args, environment: env) }
            // The variables the executable would have: the runner's own, with the overrides.
            return try InProcessAgent.start(arguments: args, environment: ProcessInfo.processInfo.environment.merging(env) { $1 }, clock: clock)
        }
        var agent: any TranscriptAgent = try start()
        defer { agent.kill() }

        var matcher = JSONMatcher()
        var directives = IssuerDirectives(issuer: issuer, browserTimeout: readTimeout)
        var methodByID: [JSONValue: String] = [:]
        func remember(_ line: Data) {
            guard let sent = try? JSONParser.parse([UInt8](line)) else { return }
            for m in sent.arrayValue ?? [sent] {
                if let method = m["method"]?.stringValue, let id = m["id"] { methodByID[id] = method }
            }
        }
        var exitExpected = false
        func fail(_ line: Int, _ message: String) -> Failure {
            Failure(file: name, line: line, message: message + (agent.stderr.isEmpty ? "" : "\n  agent stderr:\n" + agent.stderr))
        }
        /// The agent's next line. In this process, a wait in which the agent writes nothing while
        /// something of it sleeps on the clock (a device login's poll interval) skips to its wake-up.
        func nextLine() -> Data? {
            guard inProcess else { return agent.nextLine(timeout: readTimeout) }
            let deadline = Date().addingTimeInterval(readTimeout)
            while true {
                if let line = agent.nextLine(timeout: min(Self.idle, max(0, deadline.timeIntervalSinceNow))) { return line }
                if Date() >= deadline { return nil }
                clock.skipToNextWakeUp()
            }
        }
        func receive(_ line: Int) throws -> (JSONValue, String) {
            guard let data = nextLine() else {
                throw fail(line, "no message from the agent within \(readTimeout) s")
            }
            let text = String(decoding: data, as: UTF8.self)
            let value: JSONValue
            do { value = try JSONParser.parse([UInt8](data)) } catch {
                throw fail(line, "the agent wrote a line that is not JSON (\(error)): \(text)")
            }
            if let problem = schema?.check(message: value, methodOf: { methodByID[$0] }) { throw fail(line, "schema: \(problem)\n  message: \(text)") }
            return (value, text)
        }
        func parseExpected(_ text: String, _ line: Int) throws -> JSONValue {
            do { return try JSONParser.parse(expand(text)) } catch { throw fail(line, "expected line is not JSON: \(error)") }
        }

        for step in transcript.steps {
            switch step.step {
            case .send(let text):
                let line = Transcript.bytes(ofSent: matcher.substitute(expand(text)))
                remember(line)
                try agent.send(line)
            case .sendLarge(let size):
                // Padding in a member the agent ignores, so the ping itself stays valid.
                let head = #"{"jsonrpc":"2.0","method":"ping","id":"large","pad":""#
                let tail = #""}"#
                let pad = max(0, size - head.utf8.count - tail.utf8.count)
                try agent.send(Data((head + String(repeating: "x", count: pad) + tail).utf8))
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
            case .advance(let seconds):
                guard inProcess else { throw fail(step.number, "!advance moves the in-process agent's clock; this transcript played against the binary") }
                clock.advance(seconds)
            case .restart:
                agent.closeInput()
                if let extra = agent.nextLine(timeout: readTimeout) {
                    throw fail(step.number, "unexpected message before restart: \(String(decoding: extra, as: UTF8.self))")
                }
                guard agent.waitForExit(timeout: readTimeout) == 0 else { throw fail(step.number, "the agent did not exit 0 before restart") }
                agent = try start()
            case .issuer, .issuerAnswer, .issuerCount, .issuerAutoApprove, .issuerClientMetadata, .device, .browser, .browserSays, .browserDeny, .browserRedirect:
                do {
                    var directive = step.step
                    // A grant counter may name a resource at the issuer (`resource=${ISSUER}/api`).
                    if case .issuerCount(let name, let expected) = directive { directive = .issuerCount(expand(name), expected) }
                    _ = try directives.perform(directive, captures: &matcher.captures)
                } catch {
                    throw fail(step.number, "\(error)")
                }
            case .signal(let sig):
                guard let process = agent as? AgentProcess else { throw fail(step.number, "!signal needs the agent as a process") }
                kill(process.process.processIdentifier, sig)
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
