import Foundation
import JSON
import XCTest

/// What `auth-agent demo` tells a person to try.
final class DemoTests: XCTestCase {
    /// Issue 22 item 8: the demo prints the one-line `login {resource}` for the dev issuer's
    /// self-describing API, as JSON a person can paste.
    func testDemoPrintsTheLearnByItselfExample() throws {
        let h = try CLIHarness()
        let demo = try h.agent(["demo"])
        XCTAssertEqual(demo.status, 0, demo.stderr)
        let line = try XCTUnwrap(demo.stderr.split(separator: "\n").first { $0.contains(#""params":{"resource":"#) }, demo.stderr)
        let json = try XCTUnwrap(line.firstIndex(of: "{").map { line[$0...] })
        let request = try JSONParser.parse(String(json.prefix { $0 != " " }))
        XCTAssertEqual(request["method"], "login")
        let resource = try XCTUnwrap(request["params"]?["resource"]?.stringValue)
        XCTAssertTrue(resource.hasPrefix("http://127.0.0.1:") && resource.hasSuffix("/mcp"), resource)
    }
}

extension DemoTests {
    /// Issue 32 item 5: the demo's enterprise login opens its second issuer's MCP server by ID-JAG — the
    /// lines it prints, piped back in, log in to the IdP and learn the server with no browser prompt.
    func testTheDemosEnterpriseLoginOpensItsMCPServer() throws {
        let agent = try AgentProcess(arguments: ["demo"])
        var banner = ""
        for _ in 0..<100 where !banner.contains(#""id":8"#) {
            banner = agent.stderr
            if !banner.contains(#""id":8"#) { _ = agent.nextLine(timeout: 0.05) }
        }
        let lines = banner.split(separator: "\n").filter { $0.contains(#""id":7"#) || $0.contains(#""id":8"#) }
        XCTAssertEqual(lines.count, 2, banner)
        // One after the other, as a person pastes them: the second needs the first's login.
        var answers: [JSONValue] = []
        for line in lines {
            try agent.send(String(line.drop { $0 != "{" }))
            if let answer = agent.nextLine(timeout: 15) { answers.append(try JSONParser.parse([UInt8](answer))) }
        }
        XCTAssertEqual(answers.map { $0["result"]?["user"]?["sub"] }, ["alice", "alice"], "\(answers)\n\(agent.stderr)")
        XCTAssertFalse(answers.contains { $0["method"] == "loginPrompt" }, "no browser")
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 5), 0)
    }
}
