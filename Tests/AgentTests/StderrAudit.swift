import XCTest

/// Issue 36 item 4, suite-wide: no line an agent process the tests run writes to stderr prints a
/// Swift value — an error dumped as `AuthError(code: …)`, an optional as `Optional(…)` — where a
/// sentence belongs. Every spawner of the suite (`CLIHarness.run`, `AgentProcess`, `SocketAgent`,
/// the MCP hosts) hands what it collected to `check`, which fails the running test for each such line.
enum StderrAudit {
    static let patterns = ["AuthError(", "Optional("]

    /// The lines of `text` that print a Swift value.
    static func offending(_ text: String) -> [Substring] {
        text.split(whereSeparator: \.isNewline).filter { line in patterns.contains { line.contains($0) } }
    }

    static func check(_ text: String, from what: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) {
        for bad in offending(text) {
            XCTFail("\(what()) printed a Swift value on stderr: \(bad)", file: file, line: line)
        }
    }
}

final class StderrAuditTests: XCTestCase {
    func testTheAuditFindsEveryLineThatPrintsASwiftValue() {
        let text = "warn: mcp: the server's GET stream could not be opened: AuthError(code: AuthCore.AuthErrorCode.requestFailed)\n"
            + "auth-agent: logged in\nwarn: expires Optional(\"soon\")\n"
        XCTAssertEqual(StderrAudit.offending(text), ["warn: mcp: the server's GET stream could not be opened: AuthError(code: AuthCore.AuthErrorCode.requestFailed)",
                                                     "warn: expires Optional(\"soon\")"])
        XCTAssertEqual(StderrAudit.offending("warn: the server's GET stream could not be opened: http://127.0.0.1:9 could not be reached; trying again in 1 s"), [])
    }
}
