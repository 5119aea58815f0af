import Foundation
import JSON
import Locking
import TestSupport
import XCTest

/// Issue 22's "Done when" against a server nobody here wrote (FastMCP): `auth-agent login URL`
/// with no configuration at all, MCP `initialize` and `tools/list` through `auth-agent fetch` in
/// one session, later processes with zero metadata or registration requests, and four processes
/// on one expired token making one refresh between them with FastMCP's rotation.
/// The browser is a fake `xdg-open` on the PATH that follows `/authorize`'s redirect to the agent.
final class LearnFastMCPTests: XCTestCase {
    private static let shared = FastMCPServer.Shared()

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    func testLoginWithNoConfigurationThenMCPThroughFetchThenOneRefreshForFourProcesses() throws {
        try CLIHarness.requirePython()
        let server = try Self.shared.server()
        let directory = try TemporaryDirectory(prefix: "auth-agent-learn").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = try Self.agentWithoutConfiguration(directory)
        // Tokens of the login live 2 s, so that the four processes below meet an expired one.
        try server.setAccessTokenLifetime(2)
        let login = try agent(["login", server.mcpURL])
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertTrue(login.stdout.hasPrefix("Logged in to \(server.mcpURL)"), login.stdout)
        XCTAssertEqual(server.count("/register"), 1, "\(server.requests())")
        try server.setAccessTokenLifetime(3600)

        // Four processes on the one expired token: one refresh between them (FastMCP rotates the refresh token).
        Thread.sleep(forTimeInterval: 2.5)
        server.resetRequestLog()
        let mcp = ["-X", "POST", "-H", "Accept: application/json, text/event-stream", "-H", "Content-Type: application/json"]
        let initialize = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#
        let results = Locked<[CLIHarness.Finished]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            if let r = try? agent(["fetch", "-i"] + mcp + ["-d", initialize, server.mcpURL]) { results.withLock { $0.append(r) } }
        }
        XCTAssertEqual(results.current.count, 4)
        for r in results.current { XCTAssertEqual(r.status, 0, r.stderr) }
        XCTAssertEqual(server.count("/token", grant: "refresh_token"), 1, "\(server.requests())")
        XCTAssertEqual(server.count("/.well-known/"), 0, "no discovery once learned")
        XCTAssertEqual(server.count("/register"), 0, "the registration is kept")

        // initialize and tools/list in one MCP session, each a new process.
        server.resetRequestLog()
        let first = try agent(["fetch", "-i"] + mcp + ["-d", initialize, server.mcpURL])
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertTrue(first.stdout.hasPrefix("HTTP/1.1 200"), first.stdout)
        let session = try XCTUnwrap(first.stdout.split(separator: "\r\n").first { $0.lowercased().hasPrefix("mcp-session-id:") }
            .map { $0.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces) }, first.stdout)
        let inSession = mcp + ["-H", "Mcp-Session-Id: \(session)", "-H", "MCP-Protocol-Version: 2025-06-18"]
        let initialized = try agent(["fetch"] + inSession + ["-d", #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#, server.mcpURL])
        XCTAssertEqual(initialized.status, 0, initialized.stderr)
        let tools = try agent(["fetch", "-i"] + inSession + ["-d", #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#, server.mcpURL])
        XCTAssertEqual(tools.status, 0, tools.stderr)
        XCTAssertTrue(tools.stdout.hasPrefix("HTTP/1.1 200"), tools.stdout)
        XCTAssertTrue(tools.stdout.contains("\"echo\""), tools.stdout)
        XCTAssertEqual(server.count("/.well-known/") + server.count("/register"), 0, "\(server.requests())")

        // status shows it learned; forget removes it (FastMCP has no revocation endpoint here).
        let status = try agent(["status", "--json"])
        let provider = try XCTUnwrap(JSONParser.parse(status.stdout)["providers"]?.arrayValue?.first)
        XCTAssertEqual(provider["learned"], true)
        XCTAssertEqual(provider["resource"]?.stringValue, server.mcpURL)
        XCTAssertEqual(provider["issuer"]?.stringValue, server["issuer"])
        let forget = try agent(["forget", try XCTUnwrap(provider["id"]?.stringValue)])
        XCTAssertEqual(forget.status, 0, forget.stderr)
        let after = try agent(["status", "--json"])
        XCTAssertEqual(try JSONParser.parse(after.stdout)["providers"]?.arrayValue?.count, 0)
    }

    /// Runs the agent with no configuration file where it looks, its store in `directory`, and a
    /// fake `xdg-open` (with DISPLAY set) that plays the browser: it follows `/authorize`'s redirect.
    static func agentWithoutConfiguration(_ directory: URL) throws -> @Sendable ([String]) throws -> CLIHarness.Finished {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try Data("""
            #!/bin/sh
            exec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=10).read()' "$1"

            """.utf8).write(to: opener)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        let environment = [
            // No configuration at all: no file where the agent looks for one.
            "AUTH_AGENT_CONFIG": "", "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_STATE_HOME": directory.path, "DISPLAY": ":0", "DBUS_SESSION_BUS_ADDRESS": "",
            "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
        ]
        return { arguments in try CLIHarness.run(AgentProcess.binaryURL.path, arguments, environment: environment, timeout: 60) }

    }

    /// Two `login URL` at once: one registration, and the second waits for the first (one
    /// redirect port is registered) and then logs in to the provider learned meanwhile.
    func testTwoLoginsOfOneAPIAtOnceRegisterOnceAndBothSucceed() throws {
        try CLIHarness.requirePython()
        let server = try Self.shared.server()
        let directory = try TemporaryDirectory(prefix: "auth-agent-learn").url
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = try Self.agentWithoutConfiguration(directory)
        let results = Locked<[CLIHarness.Finished]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            if let r = try? agent(["login", server.mcpURL]) { results.withLock { $0.append(r) } }
        }
        XCTAssertEqual(results.current.count, 2)
        for r in results.current { XCTAssertEqual(r.status, 0, r.stderr) }
        XCTAssertEqual(server.count("/register"), 1, "\(server.requests())")
    }
}
