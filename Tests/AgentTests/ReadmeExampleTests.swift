import Foundation
import JSON
import XCTest

/// The README's first example ("Run it": requests piped into `auth-agent demo`, and "its real
/// output") against the built binary: every answer has the fields the README shows, in its order.
/// Values (tokens, times) differ from run to run, so only the shape is compared. Without this, the
/// `flows` that issue 20 added to `status` went missing from the first output a newcomer reads.
final class ReadmeExampleTests: XCTestCase {
    private static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    func testRunItExampleOutputHasTheShapeTheReadmeShows() throws {
        try Self.assertRunItExample(AgentProcess.binaryURL.path)
    }

    /// The README's piped requests into `EXECUTABLE [LEADING…] demo` — the built agent, or one
    /// installed from a package (PackagingTests) — and every answer checked against the README's.
    static func assertRunItExample(_ executable: String, _ leading: [String] = [], environment: [String: String] = [:],
                                   directory: URL? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let text = try String(contentsOf: Self.readme, encoding: .utf8)
        let requests = try Self.block(in: text, after: "A piped example:", fence: "```sh")
            .compactMap { line -> String? in
                guard let start = line.firstIndex(of: "'"), let end = line.lastIndex(of: "'"), start < end,
                      line[line.index(after: start)] == "{" else { return nil }
                return String(line[line.index(after: start)..<end])
            }
        let shown = try Self.block(in: text, after: "Its real output", fence: "```json")
        XCTAssertEqual(requests.count, 4, "the README's piped requests", file: file, line: line)
        let run = try CLIHarness.run(executable, leading + ["demo"], stdin: requests.joined(separator: "\n") + "\n",
                                     environment: environment, directory: directory, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stderr, file: file, line: line)
        let actual = run.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(actual.count, shown.count, run.stdout + run.stderr, file: file, line: line)
        for (real, readme) in zip(actual, shown) {
            XCTAssertEqual(Self.shape(try JSONParser.parse(Array(real.utf8))), Self.shape(try JSONParser.parse(Array(readme.utf8))),
                           "README shows \(readme)\nthe agent says \(real)", file: file, line: line)
        }
    }

    /// The lines of the first fenced block opening with `fence` after `marker`.
    private static func block(in text: String, after marker: String, fence: String) throws -> [String] {
        let from = try XCTUnwrap(text.range(of: marker), marker)
        let open = try XCTUnwrap(text.range(of: fence + "\n", range: from.upperBound..<text.endIndex), fence)
        let close = try XCTUnwrap(text.range(of: "\n```", range: open.upperBound..<text.endIndex))
        return text[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)
    }

    /// The value with every scalar replaced by its type: keys (in order), nesting and array lengths stay.
    private static func shape(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array(let items): "[" + items.map(shape).joined(separator: ",") + "]"
        case .object(let object): "{" + object.members.map { "\($0.0):\(shape($0.1))" }.joined(separator: ",") + "}"
        }
    }
}
