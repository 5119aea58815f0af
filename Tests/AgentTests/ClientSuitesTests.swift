import Foundation
import JSONRPC
import Locking
import XCTest

/// Runs each client library's own test suite against the binary this build
/// produced, so `swift test` remains the one command that tests everything.
/// A missing runtime skips with the reason; `.ci/run` installs them, so CI skips nothing.
final class ClientSuitesTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let suites = [("clients/python/run-tests.sh", "python3"), ("clients/node/run-tests.sh", "node"),
                                 ("clients/bash/test.sh", "jq"), ("clients/nvim/test/run.sh", "nvim")]
    /// Every suite starts before the first test and each test waits for its own: a suite mostly
    /// waits (on its agents, its issuer's latency, timeouts), so they overlap instead of adding up.
    private static let running = Locked([String: Result<SuiteRun, any Error>]())

    override class func setUp() {
        super.setUp()
        for (script, runtime) in suites where which(runtime) && FileManager.default.fileExists(atPath: root.appendingPathComponent(script).path) {
            running.withLock { $0[script] = Result { try SuiteRun(script, root: root) } }
        }
    }

    /// Ends suites whose test did not run (a filtered `swift test`).
    override class func tearDown() {
        for case .success(let suite) in running.withLock({ r in defer { r = [:] }; return r }).values { suite.stop() }
        super.tearDown()
    }

    func testPythonClient() throws { try runSuite("clients/python/run-tests.sh", needs: "python3") }
    func testNodeClient() throws { try runSuite("clients/node/run-tests.sh", needs: "node") }
    func testBashClient() throws { try runSuite("clients/bash/test.sh", needs: "jq") }
    func testNeovimClient() throws { try runSuite("clients/nvim/test/run.sh", needs: "nvim") }

    private static func which(_ command: String) -> Bool {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(command)") }
    }

    private func runSuite(_ script: String, needs runtime: String) throws {
        let url = Self.root.appendingPathComponent(script)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "\(script) is missing")
        guard Self.which(runtime) else { throw XCTSkip("\(runtime) is not installed; .ci/run installs it") }
        let suite = try XCTUnwrap(Self.running.withLock { $0.removeValue(forKey: script) }, "\(script) was not started").get()
        let finished = suite.finish()
        if !finished.inTime { XCTFail("\(script) did not finish within \(SuiteRun.limit) s") }
        let tail = finished.output.split(separator: "\n").suffix(40).joined(separator: "\n")
        print("\(script):\n\(tail)")
        XCTAssertEqual(finished.status, 0, "\(script) failed:\n\(tail)")
    }
}

/// One client suite's script running against the binary this build produced, its output collected.
private final class SuiteRun: @unchecked Sendable {
    /// The four suites run side by side on two cores, each with logins that wait out a 10 s fallback.
    static let limit: TimeInterval = 600
    private let process = Process()
    private let output = Pipe()
    private let collected = Locked(Data())
    private var reader: PipeReader!
    private let deadline = Date().addingTimeInterval(SuiteRun.limit)

    init(_ script: String, root: URL) throws {
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [root.appendingPathComponent(script).path]
        process.currentDirectoryURL = root
        var env = ProcessInfo.processInfo.environment
        env["AUTH_AGENT_BIN"] = AgentProcess.binaryURL.path
        process.environment = env
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let collected = self.collected
        reader = PipeReader(output.fileHandleForReading, onData: { data in collected.withLock { $0.append(data) } })
        try process.run()
    }

    /// Waits for the suite's end, at most until `limit` seconds after its start (then kills it).
    func finish() -> (inTime: Bool, status: Int32, output: String) {
        while process.isRunning && Date() < deadline { usleep(20_000) }
        let inTime = !process.isRunning
        stop()
        process.waitUntilExit()
        // The suite's children may hold the pipe open after it ends: wait a little, then stop reading.
        if !reader.awaitEnd(timeout: 2) { reader.stop() }
        reader.awaitEnd(timeout: 1)
        try? output.fileHandleForReading.close()
        let text = String(decoding: collected.current, as: UTF8.self)
        return (inTime, process.terminationStatus, text)
    }

    /// Kills the suite (its process group) if it is still running.
    func stop() {
        guard process.isRunning else { return }
        kill(-process.processIdentifier, SIGKILL)
        process.terminate()
    }
}
