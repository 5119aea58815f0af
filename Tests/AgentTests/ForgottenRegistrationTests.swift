import DevIssuer
import Foundation
import JSON
import XCTest

/// Issue 36's "Done when": a server that forgot the client the agent registered — FastMCP
/// restarted with its state gone, the dev issuer with the registration deleted through its admin
/// endpoint. The next new process, a running `auth-agent mcp` bridge and a running agent each
/// complete their next call after one login between them, with one registration counted at the
/// server and no hang.
final class ForgottenRegistrationTests: XCTestCase {
    /// FastMCP restarted on the same port: a new bridge notices first, then the bridge that ran
    /// through the restart (under the SDK's host, stateless revision) and a JSON-RPC agent's `fetch`.
    func testFastMCPRestartedWithItsStateGoneOneLoginServesTheNewProcessTheRunningBridgeAndTheRunningAgent() throws {
        try CLIHarness.requirePython()
        var server = try FastMCPServer.start()
        defer { server.stop() }
        let port = try XCTUnwrap(server.info["port"]?.intValue)
        let place = try Place()
        defer { place.remove() }

        // Before the restart: a bridge that stays up learns FastMCP and logs in; an agent uses that login.
        let running = try ServingHost(url: server.mcpURL, place: place)
        defer { running.stop() }
        XCTAssertNotNil(try running.ready(), running.transcript)
        XCTAssertEqual(try running.call("one"), ["echo": "one"], running.transcript)
        let agent = try AgentProcess(arguments: ["--config", place.config], environment: place.environment)
        defer { agent.kill() }
        try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"test"}}}"#)
        _ = try Self.answer(agent, id: 1)
        XCTAssertEqual(try Self.fetch(agent, id: 2, url: server.mcpURL)["status"], 200)

        // The restart: a new process with no registrations, tokens or sessions, on the same port.
        server.stop()
        server = try FastMCPServer.start(environment: ["FASTMCP_PORT": String(port)])
        XCTAssertEqual(server.mcpURL, running.url)

        let fresh = try McpFastMCPTests.python(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", place.config,
                                                "--mode", "auto", "--quick"], bin: place.bin, timeout: 90, environment: place.environment)
        XCTAssertEqual(fresh["echo"], "hi", "the new process registers again and logs in")
        XCTAssertEqual(try running.call("two"), ["echo": "two"], running.transcript)
        XCTAssertEqual(try Self.fetch(agent, id: 3, url: server.mcpURL)["status"], 200, agent.stderr)

        XCTAssertEqual(server.count("/register"), 1, "one registration between them: \(server.requests())")
        XCTAssertEqual(server.count("/token", grant: "authorization_code"), 1, "one login between them: \(server.requests())")
        // SIGTERM rather than the end of its input: the FastMCP started after it holds a copy of that pipe.
        agent.kill()
        XCTAssertNotNil(agent.waitForExit(timeout: 5), "the agent's stderr is read to its end")
    }

    /// The dev issuer forgets the registration (`POST /_admin/unregister`) and every token: the
    /// running bridge notices first and logs in again (a device login), then a new bridge and a
    /// running agent go on with that login.
    func testTheDevIssuerForgettingTheRegistrationCostsTheRunningBridgeOneLoginAndNobodyElseAny() throws {
        let issuer = DevIssuer(options: DevIssuerOptions(deviceInterval: 1))
        _ = try issuer.start(port: 0)
        defer { issuer.stop() }
        let place = try Place()
        defer { place.remove() }
        let url = issuer.baseURL + "/mcp"
        let bridge = try AgentProcess(arguments: ["mcp", url, "--config", place.config, "--device"], environment: place.environment)
        defer { bridge.kill() }
        try bridge.send(Self.request(1, "tools/list"))
        XCTAssertEqual(Self.approveDeviceCodes(bridge, issuer, count: 1), 1, bridge.stderr)
        XCTAssertNotNil(try Self.answer(bridge, id: 1)["result"])
        let agent = try AgentProcess(arguments: ["--config", place.config], environment: place.environment)
        defer { agent.kill() }
        try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"test"}}}"#)
        _ = try Self.answer(agent, id: 1)
        XCTAssertEqual(try Self.fetch(agent, id: 2, url: url, method: "GET")["status"], 200)
        let before = issuer.registeredClientIDs
        XCTAssertEqual(before.count, 1)

        XCTAssertEqual(try Self.admin(issuer, "/_admin/unregister", [:])["unregistered"], .array(before.map(JSONValue.string)))
        _ = try Self.admin(issuer, "/_admin/fault", ["revokeAll": true])

        try bridge.send(Self.request(2, "tools/list"))
        XCTAssertEqual(Self.approveDeviceCodes(bridge, issuer, count: 1), 1, "one login, in the running bridge: \(bridge.stderr)")
        XCTAssertNotNil(try Self.answer(bridge, id: 2)["result"], bridge.stderr)
        let later = try AgentProcess(arguments: ["mcp", url, "--config", place.config, "--device"], environment: place.environment)
        defer { later.kill() }
        try later.send(Self.request(3, "tools/list"))
        XCTAssertNotNil(try Self.answer(later, id: 3)["result"], later.stderr)
        XCTAssertEqual(try Self.fetch(agent, id: 3, url: url, method: "GET")["status"], 200, agent.stderr)

        XCTAssertEqual(issuer.count("deviceAuthorization"), 2, "the first login and the one after the server forgot")
        XCTAssertEqual(issuer.registeredClientIDs.count, 1, "one registration again: \(issuer.registeredClientIDs)")
        XCTAssertNotEqual(issuer.registeredClientIDs, before)
        for process in [bridge, later, agent] {
            process.closeInput()
            XCTAssertEqual(process.waitForExit(timeout: 5), 0)
        }
        XCTAssertFalse(bridge.stderr.contains("has expired"), bridge.stderr)
    }

    // MARK: Helpers

    /// A directory with the agent's store and configuration (no providers, `openBrowser` left off), and a
    /// fake `xdg-open` on the PATH that follows `/authorize`'s redirect (with DISPLAY set).
    struct Place {
        let directory: URL
        var bin: String { directory.appendingPathComponent("bin").path }
        var config: String { directory.appendingPathComponent("config.json").path }
        var environment: [String: String] {
            ["DISPLAY": ":0", "SSH_CONNECTION": "", "PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-forgotten-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("bin"), withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let script = "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' \"$1\"\n"
            _ = FileManager.default.createFile(atPath: bin + "/xdg-open", contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
            let text = "{\"store\": {\"kind\": \"file\", \"path\": \"\(directory.path)/store\"}}"
            _ = FileManager.default.createFile(atPath: config, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// Tests/MCP/bridge_host.py --serve: the SDK's host with a bridge that stays up, calling `echo` per line.
    final class ServingHost: @unchecked Sendable {
        let url: String
        private let process = Process()
        private let input = Pipe()
        private let output = Pipe()
        private let errors = Pipe()
        private let lock = NSCondition()
        private var lines: [String] = []
        private var stderrText = ""

        init(url: String, place: Place) throws {
            self.url = url
            let venv = ProcessInfo.processInfo.environment["FASTMCP_VENV"] ?? "/tmp/auth-agent-fastmcp-venv"
            process.executableURL = URL(fileURLWithPath: venv + "/bin/python")
            process.arguments = [FastMCPServer.script.deletingLastPathComponent().appendingPathComponent("bridge_host.py").path,
                                 "--bridge", AgentProcess.binaryURL.path, "--url", url, "--config", place.config, "--mode", "auto", "--serve"]
            process.environment = ProcessInfo.processInfo.environment.merging(place.environment) { $1 }
            (process.standardInput, process.standardOutput, process.standardError) = (input, output, errors)
            try process.run()
            for (pipe, isOutput) in [(output, true), (errors, false)] {
                Thread.detachNewThread { [self] in
                    var partial = ""
                    while true {
                        let data = pipe.fileHandleForReading.availableData
                        if data.isEmpty { break }
                        lock.lock()
                        if isOutput {
                            partial += String(decoding: data, as: UTF8.self)
                            while let nl = partial.firstIndex(of: "\n") {
                                lines.append(String(partial[..<nl]))
                                partial = String(partial[partial.index(after: nl)...])
                            }
                        } else {
                            stderrText += String(decoding: data, as: UTF8.self)
                        }
                        lock.broadcast()
                        lock.unlock()
                    }
                }
            }
        }

        var transcript: String { lock.withLock { "stdout: \(lines)\nstderr: \(stderrText.suffix(4000))" } }

        private func next(timeout: Double) throws -> JSONValue {
            let deadline = Date().addingTimeInterval(timeout)
            lock.lock()
            defer { lock.unlock() }
            while lines.isEmpty, lock.wait(until: deadline) {}
            guard !lines.isEmpty else { throw CLIHarness.TimedOut(description: "no answer from the host within \(timeout) s") }
            return try JSONParser.parse(lines.removeFirst())
        }

        func ready() throws -> JSONValue? { try next(timeout: 90)["ready"] }

        func call(_ text: String) throws -> JSONValue {
            input.fileHandleForWriting.write(Data((text + "\n").utf8))
            return try next(timeout: 60)
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            StderrAudit.check(lock.withLock { stderrText }, from: "auth-agent mcp (under bridge_host.py --serve)")
        }
    }

    static func request(_ id: Int, _ method: String) -> String { #"{"jsonrpc":"2.0","id":\#(id),"method":"\#(method)","params":{}}"# }

    /// The agent's `fetch` with `login: "ifNeeded"`: an MCP `initialize` POST, or a GET.
    static func fetch(_ agent: AgentProcess, id: Int, url: String, method: String = "POST") throws -> JSONValue {
        let body = JSONSerializer.string(.string(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#))
        let request = method == "GET" ? #"{"method":"GET","url":"\#(url)"}"#
            : #"{"method":"POST","url":"\#(url)","headers":{"Accept":"application/json, text/event-stream","Content-Type":"application/json"},"body":\#(body)}"#
        try agent.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"fetch","params":{"request":\#(request),"login":"ifNeeded"}}"#)
        let answer = try Self.answer(agent, id: id, timeout: 60)
        return answer["result"] ?? answer
    }

    /// The answer to request `id` (notifications before it skipped).
    static func answer(_ process: AgentProcess, id: Int, timeout: Double = 30) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            guard let line = process.nextLine(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            let value = try JSONParser.parse([UInt8](line))
            if value["id"] == .int(Int64(id)) { return value }
        }
        throw CLIHarness.TimedOut(description: "no answer to \(id) within \(timeout) s; stderr:\n\(process.stderr)")
    }

    /// Plays the person for the device codes the bridge prints that nobody decided yet, until `count` were approved.
    static func approveDeviceCodes(_ process: AgentProcess, _ issuer: DevIssuer, count: Int) -> Int {
        var approved: [String] = []
        for _ in 0..<400 where approved.count < count {
            for code in process.stderr.components(separatedBy: "enter the code ").dropFirst().map({ String($0.prefix { !$0.isWhitespace }) })
            where !approved.contains(code) && issuer.approveDevice(userCode: code, username: "alice") {
                approved.append(code)
            }
            usleep(50_000)
        }
        return approved.count
    }

    static func admin(_ issuer: DevIssuer, _ path: String, _ body: JSONObject) throws -> JSONValue {
        let answer = try Browser(timeout: 5).fetch("POST", URL(string: issuer.baseURL + path)!, json: JSONSerializer.string(.object(body)))
        XCTAssertEqual(answer.status, 200, answer.body)
        return try JSONParser.parse(Array(answer.body.utf8))
    }
}
