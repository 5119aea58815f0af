import Foundation
import JSON
import XCTest

/// The official MCP Python SDK as the host (`Client(StdioServerParameters(...))`, which runs
/// `stdio_client` + `ClientSession`) launching `auth-agent mcp URL` against FastMCP over
/// Streamable HTTP with its in-memory OAuth provider. The login is played by an `xdg-open` on
/// the PATH that follows FastMCP's `/authorize` redirect to the agent's loopback listener.
///
/// Until the agent learns providers from a 401 (issue 22), the test registers a client at
/// FastMCP's `/register` and configures it by hand (Tests/MCP/bridge_host.py --register).
final class McpFastMCPTests: XCTestCase {
    private var directory: URL!
    private var server: FastMCPServer!
    private static let shared = FastMCPServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    override func setUpWithError() throws {
        server = try Self.shared.server()
        directory = try Self.hostDirectory("auth-agent-mcp-sdk")
        let port = 20_000 + Int.random(in: 0..<20_000)
        _ = try python(["--register", server.baseURL, "--write-config", config, "--store", directory.appendingPathComponent("store").path,
                        "--redirect-port", String(port)])
        server.resetRequestLog()
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    private var config: String { directory.appendingPathComponent("config.json").path }

    /// A fresh directory for a test's hosts, with the login's "browser" in its `bin`: an `xdg-open`
    /// that follows FastMCP's `/authorize` redirect to the agent's loopback listener.
    static func hostDirectory(_ prefix: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("bin"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let opener = directory.appendingPathComponent("bin/xdg-open").path
        let script = "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n"
        _ = FileManager.default.createFile(atPath: opener, contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
        return directory
    }

    /// Runs Tests/MCP/bridge_host.py in FastMCP's virtualenv; its one JSON line.
    private func python(_ arguments: [String], timeout: Double = 60) throws -> JSONValue {
        try Self.python(arguments, bin: directory.appendingPathComponent("bin").path, timeout: timeout)
    }

    static func python(_ arguments: [String], bin: String, timeout: Double, environment extra: [String: String] = [:],
                       script name: String = "bridge_host.py") throws -> JSONValue {
        let venv = ProcessInfo.processInfo.environment["FASTMCP_VENV"] ?? "/tmp/auth-agent-fastmcp-venv"
        let script = FastMCPServer.script.deletingLastPathComponent().appendingPathComponent(name)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: venv + "/bin/python")
        process.arguments = [script.path] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = bin + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment.merge(extra) { $1 }
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        let out = Locked(Data()), err = Locked(Data())
        let readers = DispatchGroup()
        for (pipe, sink) in [(output, out), (errors, err)] {
            readers.enter()
            DispatchQueue.global().async {
                let data = pipe.fileHandleForReading.readDataToEndOfFile()
                sink.withLock { $0 = data }
                readers.leave()
            }
        }
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { process.terminate() }
        readers.wait()
        let text = String(decoding: out.withLock { $0 }, as: UTF8.self)
        // The SDK's stdio host passes the bridge's stderr through to its own.
        StderrAudit.check(String(decoding: err.withLock { $0 }, as: UTF8.self), from: "auth-agent mcp (under \(name))")
        guard process.terminationStatus == 0 else {
            throw Failure(description: "\(name) exited \(process.terminationStatus):\n\(text)\n\(String(decoding: err.withLock { $0 }, as: UTF8.self).suffix(4000))")
        }
        guard let line = text.split(separator: "\n").last else { return .null }
        return try JSONParser.parse(String(line))
    }

    struct Failure: Error, CustomStringConvertible { let description: String }

    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func withLock<R>(_ body: (inout Value) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&value) }
    }

    private func host(mode: String, quick: Bool = false) throws -> JSONValue {
        try python(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", mode] + (quick ? ["--quick"] : []))
    }

    func testTheSDKHostListsAndCallsToolsAfterOneLoginInEitherRevision() throws {
        // 2025-11-25 (the initialize handshake): everything, elicitation answered by the SDK's callback.
        let legacy = try host(mode: "legacy")
        XCTAssertEqual(legacy["protocolVersion"], "2025-11-25")
        XCTAssertEqual(legacy["tools"], ["add", "ask_name", "connect_account", "count", "echo"])
        XCTAssertEqual(legacy["echo"], "hi")
        XCTAssertEqual(legacy["count"], "counted to 3")
        XCTAssertEqual(legacy["progress"], [1.0, 2.0, 3.0])
        XCTAssertEqual(legacy["elicited"], "What is your name?")
        XCTAssertEqual(legacy["ask_name"], "Hello, Ada!")
        XCTAssertEqual(legacy["resources"], ["test://greeting"])
        XCTAssertEqual(legacy["greeting"], "Hello from the test server")
        XCTAssertEqual(legacy["prompt"], "Please greet Ada warmly.")
        XCTAssertEqual(server.count("/authorize"), 1, "one login")
        XCTAssertEqual(server.count("/token", method: "POST"), 1)
        XCTAssertEqual(server.count("/mcp", method: "DELETE"), 1, "the session ended at exit: \(server.requests())")

        // The SDK's default (server/discover at 2026-07-28): a second bridge, no login, no registration.
        server.resetRequestLog()
        let modern = try host(mode: "auto")
        XCTAssertEqual(modern["protocolVersion"], "2026-07-28")
        XCTAssertEqual(modern["tools"], ["add", "ask_name", "connect_account", "count", "echo"])
        XCTAssertEqual(modern["echo"], "hi")
        XCTAssertEqual(modern["progress"], [1.0, 2.0, 3.0])
        XCTAssertEqual(modern["ask_name"], "Hello, Ada!", "a multi-round-trip result passed through, answered by the SDK's driver")
        XCTAssertEqual(modern["greeting"], "Hello from the test server")
        XCTAssertEqual(modern["prompt"], "Please greet Ada warmly.")
        XCTAssertEqual(server.count("/authorize") + server.count("/register") + server.count("/token"), 0, "\(server.requests())")
    }

    func testThreeBridgesStartedTogetherMakeOneLoginAndOneRefreshPerExpiry() throws {
        // Long enough that three bridges starting on a loaded machine all find the login's token fresh.
        try server.setAccessTokenLifetime(8)
        let loggedIn = Date()
        let arguments = ["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", "legacy", "--quick"]
        let bin = directory.appendingPathComponent("bin").path
        func three() throws -> [JSONValue] {
            let results = Locked<[Result<JSONValue, Error>]>([])
            DispatchQueue.concurrentPerform(iterations: 3) { _ in
                let result = Result { try Self.python(arguments, bin: bin, timeout: 60) }
                results.withLock { $0.append(result) }
            }
            return try results.withLock { $0 }.map { try $0.get() }
        }
        for result in try three() { XCTAssertEqual(result["echo"], "hi") }
        XCTAssertEqual(server.count("/authorize"), 1, "one interactive login between three bridges: \(server.requests())")
        XCTAssertEqual(server.count("/token", method: "POST"), 1)
        // The refreshed token lives long: a bridge that starts late (a loaded machine) must not find it stale again.
        try server.setAccessTokenLifetime(3600)
        usleep(useconds_t(max(0, 9 - Date().timeIntervalSince(loggedIn)) * 1e6))  // the login's token has expired
        server.resetRequestLog()
        for result in try three() { XCTAssertEqual(result["echo"], "hi") }
        XCTAssertEqual(server.count("/authorize"), 0)
        XCTAssertEqual(server.count("/token", method: "POST"), 1, "one refresh between three bridges: \(server.requests())")
    }

    func testA401ForTheTokenSentRefreshesOnceAndResends() throws {
        XCTAssertEqual(try host(mode: "legacy", quick: true)["echo"], "hi")
        // The server no longer knows the stored token (as after a revocation): the bridge must refresh and resend.
        let store = directory.appendingPathComponent("store")
        let sessionFile = try FileManager.default.contentsOfDirectory(atPath: store.path)
            .first { $0.hasPrefix("fastmcp+") && !$0.hasSuffix("accounts.json") }
        let path = store.appendingPathComponent(try XCTUnwrap(sessionFile)).path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let replaced = text.replacingOccurrences(of: #""accessToken":"[^"]*""#, with: #""accessToken":"no-longer-valid""#, options: .regularExpression)
        XCTAssertNotEqual(text, replaced)
        try replaced.write(toFile: path, atomically: true, encoding: .utf8)
        server.resetRequestLog()
        XCTAssertEqual(try host(mode: "legacy", quick: true)["echo"], "hi")
        XCTAssertEqual(server.count("/token", method: "POST"), 1, "one refresh: \(server.requests())")
        XCTAssertEqual(server.count("/authorize"), 0)
        XCTAssertEqual(server.requests().first { $0.path == "/mcp" }?.status, 401, "the first POST carried the rejected token")
    }
}
