import Foundation
import XCTest

/// How the agent process treats a store directory it must not use.
final class StoreDirectoryTests: XCTestCase {
    /// Issue 10 item 12: `$XDG_STATE_HOME/auth-agent` as a symlink makes the agent exit 2 with a clear
    /// message, as a directory owned by another user does, and the link's target is left alone.
    func testASymlinkedStoreDirectoryExits2WithoutTouchingTheTarget() throws {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-store-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temp) }
        let target = temp.appendingPathComponent("target")
        let state = temp.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(target.path, 0o755), 0)
        XCTAssertEqual(symlink(target.path, state.appendingPathComponent("auth-agent").path), 0)
        let config = temp.appendingPathComponent("config.json")
        try Data(#"{"providers": [{"id": "pat", "flow": "token", "origins": ["https://api.example.com"]}]}"#.utf8).write(to: config)

        let agent = try AgentProcess(arguments: ["--config", config.path], environment: ["XDG_STATE_HOME": state.path])
        defer { agent.kill() }
        XCTAssertEqual(agent.waitForExit(timeout: 10), 2)
        XCTAssertTrue(agent.stderr.contains("\(state.path)/auth-agent is a symbolic link"), agent.stderr)
        var st = stat()
        XCTAssertEqual(stat(target.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o755, "the target's mode is unchanged")
    }
}
