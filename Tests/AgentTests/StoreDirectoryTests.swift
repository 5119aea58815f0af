import Foundation
import JSON
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

    /// Issue 10 item 10: a symlink planted at `<provider>.lock` is not "another agent is busy" (1005,
    /// retryable, silent) but 1010 naming the path, logged; the link is not followed.
    func testASymlinkAtTheLockFileAnswers1010AndIsLogged() throws {
        let temp = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-lock-link-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: temp) }
        let store = temp.appendingPathComponent("store")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        let victim = temp.appendingPathComponent("victim").path
        let lock = store.appendingPathComponent("pat.lock").path
        XCTAssertEqual(symlink(victim, lock), 0)
        let config = temp.appendingPathComponent("config.json")
        try Data(#"{"store": {"kind": "file", "path": "\#(store.path)"}, "providers": [{"id": "pat", "displayName": "Personal token", "flow": "token", "origins": ["https://api.example.com"]}]}"#.utf8).write(to: config)

        let agent = try AgentProcess(arguments: ["--config", config.path])
        defer { agent.kill() }
        try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"login","params":{"provider":"pat","credentials":{"token":"ghp_abc"}}}"# + "\n")
        let line = try XCTUnwrap(agent.nextLine(timeout: 10), "no answer; stderr: \(agent.stderr)")
        let answer = try JSONParser.parse(Array(line))
        XCTAssertEqual(answer["error"]?["code"], 1010, "\(answer)")
        XCTAssertEqual(answer["error"]?["data"]?["reason"], "storeUnavailable")
        XCTAssertEqual(answer["error"]?["data"]?["retryable"], true)
        XCTAssertTrue(answer["error"]?["message"]?.stringValue?.contains("\(lock) is a symbolic link") == true, "\(answer)")
        XCTAssertFalse(line.contains(Data("ghp_abc".utf8)), "no token in the error")
        agent.closeInput()
        XCTAssertEqual(agent.waitForExit(timeout: 10), 0)
        XCTAssertTrue(agent.stderr.contains("\(lock) is a symbolic link"), agent.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: victim), "the link was not followed")
    }
}
