import Foundation
import JSONRPC
import Locking
import XCTest

/// Runs each client library's own test suite against the binary this build
/// produced, so `swift test` remains the one command that tests everything.
/// A missing runtime skips with the reason; `.ci/run` installs them, so CI skips nothing.
final class ClientSuitesTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    func testPythonClient() throws { try runSuite("clients/python/run-tests.sh", needs: "python3") }
    func testNodeClient() throws { try runSuite("clients/node/run-tests.sh", needs: "node") }
    func testBashClient() throws { try runSuite("clients/bash/test.sh", needs: "jq") }
    func testNeovimClient() throws { try runSuite("clients/nvim/test/run.sh", needs: "nvim") }

    private func which(_ command: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(command)") }
    }

    private func runSuite(_ script: String, needs runtime: String) throws {
        let url = Self.root.appendingPathComponent(script)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "\(script) is missing")
        guard which(runtime) else { throw XCTSkip("\(runtime) is not installed; .ci/run installs it") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [url.path]
        process.currentDirectoryURL = Self.root
        var env = ProcessInfo.processInfo.environment
        env["AUTH_AGENT_BIN"] = AgentProcess.binaryURL.path
        process.environment = env
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let collected = Locked(Data())
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.withLock { $0.append(data) }
        }
        try process.run()
        let deadline = Date().addingTimeInterval(300)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(-process.processIdentifier, SIGKILL)
            process.terminate()
            XCTFail("\(script) did not finish within 300 s")
        }
        process.waitUntilExit()
        output.fileHandleForReading.readabilityHandler = nil
        let text = String(decoding: collected.current + output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let tail = text.split(separator: "\n").suffix(40).joined(separator: "\n")
        print("\(script):\n\(tail)")
        XCTAssertEqual(process.terminationStatus, 0, "\(script) failed:\n\(tail)")
    }
}
