import Foundation
import XCTest

/// The harness itself: an agent that dies must turn into a failing test that
/// says why, never into a test runner killed by SIGPIPE.
final class AgentProcessTests: XCTestCase {
    func testWritingToAnAgentThatExitedThrowsWithItsStderr() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-no-such-config-\(UUID().uuidString).json")
        let agent = try AgentProcess(arguments: ["--config", missing.path])
        XCTAssertEqual(agent.waitForExit(timeout: 10), 2, "a missing config file exits 2")
        XCTAssertThrowsError(try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)) { error in
            let description = String(describing: error)
            XCTAssertTrue(description.contains("exited with status 2"), description)
            XCTAssertTrue(description.contains(missing.lastPathComponent), "the agent's stderr is in the failure: \(description)")
        }
    }
}
