import Foundation
import JSON
import XCTest

/// A test class whose tests run hosts of Tests/MCP (the MCP Python SDK's, or the tests' own)
/// through `auth-agent mcp`, each test in a fresh directory (its `bin` holding the login's
/// "browser"), against FastMCP servers the class shares, with a client of the test's registered
/// and configured at them.
class FastMCPHostCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try McpFastMCPTests.hostDirectory("auth-agent-mcp-\(String(describing: Self.self))")
    }

    override func tearDown() {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        super.tearDown()
    }

    var config: String { directory.appendingPathComponent("config.json").path }

    /// The class's server with a client of this test's registered (and configured) at it.
    func server(_ shared: FastMCPServer.Shared) throws -> FastMCPServer {
        let server = try shared.server()
        _ = try run(["--register", server.baseURL, "--write-config", config, "--store", directory.appendingPathComponent("store").path,
                     "--redirect-port", String(20_000 + Int.random(in: 0..<20_000))])
        server.resetRequestLog()
        return server
    }

    /// Runs `script` of Tests/MCP in FastMCP's virtualenv; its one JSON line.
    func run(_ arguments: [String], script: String = "bridge_host.py", environment: [String: String] = [:]) throws -> JSONValue {
        try McpFastMCPTests.python(arguments, bin: directory.appendingPathComponent("bin").path, timeout: 90, environment: environment, script: script)
    }

    /// What every host saw of FastMCP's tools, resources and prompts, whichever the revisions.
    func assertServed(_ seen: JSONValue, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(seen["tools"], ["add", "ask_name", "connect_account", "count", "echo"], "\(seen)", file: file, line: line)
        XCTAssertEqual(seen["echo"], "hi", file: file, line: line)
        XCTAssertEqual(seen["count"], "counted to 3", file: file, line: line)
        XCTAssertEqual(seen["progress"], [1.0, 2.0, 3.0], file: file, line: line)
        XCTAssertEqual(seen["elicited"], "What is your name?", file: file, line: line)
        XCTAssertEqual(seen["ask_name"], "Hello, Ada!", file: file, line: line)
        XCTAssertEqual(seen["resources"], ["test://greeting"], file: file, line: line)
        XCTAssertEqual(seen["greeting"], "Hello from the test server", file: file, line: line)
        XCTAssertEqual(seen["prompt"], "Please greet Ada warmly.", file: file, line: line)
    }
}
