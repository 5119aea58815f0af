import Foundation
import JSON
import XCTest

/// What the agent maps at start-up. One `import Foundation` in any module the
/// executable links makes the loader map Foundation, ICU and their
/// initialisers before the first request (and libcurl, linked, brings thirty
/// libraries); the agent needs none of them to answer.
final class StartupTests: XCTestCase {
    func testAnAnsweringAgentMapsNeitherFoundationNorICUNorCurl() throws {
        #if os(Linux)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-startup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("config.json")
        try Data(#"{"store": {"kind": "memory"}, "providers": []}"#.utf8).write(to: config)
        let agent = try AgentProcess(arguments: ["--config", config.path])
        defer { agent.kill() }
        try agent.send(#"{"jsonrpc":"2.0","method":"ping","id":1}"#)
        XCTAssertNotNil(agent.nextLine(timeout: 10), "no answer to ping; stderr: \(agent.stderr)")

        let maps = try String(contentsOfFile: "/proc/\(agent.process.processIdentifier)/maps", encoding: .utf8)
        let libraries = Set(maps.split(separator: "\n").compactMap { line in
            line.split(separator: " ", omittingEmptySubsequences: true).last.map { $0.split(separator: "/").last.map(String.init) ?? "" }
        }.filter { $0.hasSuffix(".so") || $0.contains(".so.") })
        XCTAssertFalse(libraries.isEmpty, "no libraries read from /proc maps")
        for forbidden in ["libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
                          "libFoundationNetworking.so", "libcurl"] {
            XCTAssertFalse(libraries.contains { $0.hasPrefix(forbidden) }, "\(forbidden) is mapped: \(libraries.sorted())")
        }
        #else
        throw XCTSkip("reads /proc/<pid>/maps")
        #endif
    }

    /// The agent reads its environment from `environ` rather than `ProcessInfo`;
    /// `AUTH_AGENT_CONFIG` still names the configuration.
    func testTheEnvironmentNamesTheConfiguration() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-env-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("config.json")
        try Data(#"{"store": {"kind": "memory"}, "providers": [{"id": "from-env", "flow": "token", "origins": ["https://api.example.com"]}]}"#.utf8).write(to: config)
        let conversation = try AgentConversation(arguments: [], environment: ["AUTH_AGENT_CONFIG": config.path, "HOME": dir.path])
        let status = try conversation.call("status")
        XCTAssertEqual(status["result"]?["providers"]?.arrayValue?.first?["id"], "from-env", "\(status)")
    }

    /// A termination signal is never lost, however early: SIGTERM sent the moment the
    /// first answer is read ends the agent (exit 0) while its input is still open. With
    /// Dispatch's signal sources, installed a little later by Dispatch's own thread, the
    /// signal was ignored in about one start in ten and the agent kept running.
    func testSIGTERMRightAfterTheFirstAnswerEndsTheAgent() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-sigterm-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("config.json")
        try Data(#"{"store": {"kind": "memory"}, "providers": []}"#.utf8).write(to: config)
        for attempt in 1...100 {
            let agent = try AgentProcess(arguments: ["--config", config.path])
            defer { agent.kill() }
            try agent.send(#"{"jsonrpc":"2.0","method":"ping","id":1}"#)
            XCTAssertNotNil(agent.nextLine(timeout: 10), "no answer to ping; stderr: \(agent.stderr)")
            Foundation.kill(agent.process.processIdentifier, SIGTERM)
            let status = agent.waitForExit(timeout: 5)
            XCTAssertEqual(status, 0, "start \(attempt): SIGTERM did not end the agent")
            if status != 0 { break }
        }
    }
}
