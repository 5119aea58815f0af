import Foundation
import JSON
import XCTest

/// Issue 23's first Done-when point as written: the SDK's stdio host pointed at
/// `auth-agent mcp http://127.0.0.1:PORT/mcp` with no configuration — the bridge learns FastMCP
/// from its 401 (issue 22: discovery, registration, login), one login the test plays as the
/// browser (`DISPLAY` set and an `xdg-open` on the PATH that follows `/authorize`'s redirect).
final class McpLearnedFastMCPTests: XCTestCase {
    func testWithNoConfigurationOneLoginServesEveryBridge() throws {
        let server = try FastMCPServer.start()
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-mcp-learn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("bin"), withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: directory) }
        let opener = directory.appendingPathComponent("bin/xdg-open").path
        let script = "#!/bin/sh\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1]).read()' \"$1\"\n"
        _ = FileManager.default.createFile(atPath: opener, contents: Data(script.utf8), attributes: [.posixPermissions: 0o700])
        // No providers: only where the store is, so the test's sessions stay in its directory.
        let config = directory.appendingPathComponent("config.json").path
        let text = "{\"store\": {\"kind\": \"file\", \"path\": \"\(directory.path)/store\"}}"
        _ = FileManager.default.createFile(atPath: config, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
        let bin = directory.appendingPathComponent("bin").path
        func host(_ mode: String, quick: Bool = false) throws -> JSONValue {
            try McpFastMCPTests.python(["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", mode]
                                       + (quick ? ["--quick"] : []), bin: bin, timeout: 90, environment: ["DISPLAY": ":0"])
        }

        // Three bridges started together on a server nobody logged in to: one registration, one login.
        let arguments = ["--bridge", AgentProcess.binaryURL.path, "--url", server.mcpURL, "--config", config, "--mode", "legacy", "--quick"]
        let results = McpFastMCPTests.Locked<[Result<JSONValue, Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let result = Result { try McpFastMCPTests.python(arguments, bin: bin, timeout: 90, environment: ["DISPLAY": ":0"]) }
            results.withLock { $0.append(result) }
        }
        for result in results.withLock({ $0 }) { XCTAssertEqual(try result.get()["echo"], "hi") }
        XCTAssertEqual(server.count("/register"), 1, "\(server.requests())")
        XCTAssertEqual(server.count("/authorize"), 1, "\(server.requests())")
        XCTAssertEqual(server.count("/token", method: "POST"), 1)

        // Later bridges, in 2025-11-25 and the SDK's default revision: no discovery, registration or login.
        server.resetRequestLog()
        let legacy = try host("legacy")
        XCTAssertEqual(legacy["protocolVersion"], "2025-11-25")
        XCTAssertEqual(legacy["tools"], ["add", "ask_name", "connect_account", "count", "echo"])
        XCTAssertEqual(legacy["ask_name"], "Hello, Ada!")
        XCTAssertEqual(legacy["progress"], [1.0, 2.0, 3.0])
        let modern = try host("auto")
        XCTAssertEqual(modern["protocolVersion"], "2026-07-28")
        XCTAssertEqual(modern["echo"], "hi")
        XCTAssertEqual(server.count("/.well-known/") + server.count("/register") + server.count("/authorize") + server.count("/token"), 0,
                       "\(server.requests())")
    }
}
