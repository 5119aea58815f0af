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
