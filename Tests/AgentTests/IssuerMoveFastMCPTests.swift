import Foundation
import JSON
import XCTest

/// Issue 33 item 3 against a server nobody here wrote: FastMCP restarted with its authorization
/// server at another issuer (`http://localhost:PORT/` instead of `http://127.0.0.1:PORT/`), the
/// resource unchanged. The running agent's next `fetch` finds its token refused, reads the resource's
/// metadata, moves the learned API to the new issuer with a registration of its own, logs in there
/// and answers; `providersChanged` names the API under `changed`, and stderr says so.
final class IssuerMoveFastMCPTests: XCTestCase {
    func testFastMCPRestartedOnAnotherIssuerIsLoggedInThereWithARegistrationOfItsOwn() throws {
        try CLIHarness.requirePython()
        var server = try FastMCPServer.start()
        defer { server.stop() }
        let port = try XCTUnwrap(server.info["port"]?.intValue)
        let place = try ForgottenRegistrationTests.Place()
        defer { place.remove() }
        let agent = try AgentProcess(arguments: ["--config", place.config], environment: place.environment)
        defer { agent.kill() }
        try agent.send(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"test"}}}"#)
        _ = try ForgottenRegistrationTests.answer(agent, id: 1)
        try agent.send(#"{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"events":["providersChanged"]}}"#)
        _ = try ForgottenRegistrationTests.answer(agent, id: 2)
        XCTAssertEqual(try Self.fetchHearing(agent, id: 3, url: server.mcpURL).0["status"], 200, agent.stderr)

        server.stop()
        server = try FastMCPServer.start(environment: ["FASTMCP_PORT": String(port), "FASTMCP_ISSUER_HOST": "localhost"])
        let newIssuer = "http://localhost:\(port)/"
        XCTAssertEqual(server.info["issuer"]?.stringValue, newIssuer)

        let (answer, heard) = try Self.fetchHearing(agent, id: 4, url: server.mcpURL)
        XCTAssertEqual(answer["status"], 200, agent.stderr)
        XCTAssertEqual(server.count("/register"), 1, "a registration of its own at the new issuer: \(server.requests())")
        XCTAssertEqual(server.count("/token", grant: "authorization_code"), 1, "\(server.requests())")
        XCTAssertEqual(server.count("/token", grant: "refresh_token"), 0, "the former issuer's refresh token is not sent: \(server.requests())")
        let changed = heard.first { $0["method"] == "providersChanged" }
        XCTAssertEqual(changed?["params"]?["changed"], .array([.string("127.0.0.1-\(port)")]), "\(heard)")
        XCTAssertTrue(agent.stderr.contains("now names the authorization server \(newIssuer)"), agent.stderr)
    }

    /// `fetch` with `login: "ifNeeded"`, and the notifications that came before its answer; a
    /// `loginPrompt`'s URL is opened as the person's browser would (FastMCP approves at once).
    static func fetchHearing(_ agent: AgentProcess, id: Int, url: String) throws -> (JSONValue, [JSONValue]) {
        let body = JSONSerializer.string(.string(#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#))
        let request = #"{"method":"POST","url":"\#(url)","headers":{"Accept":"application/json, text/event-stream","Content-Type":"application/json"},"body":\#(body)}"#
        try agent.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"fetch","params":{"request":\#(request),"login":"ifNeeded"}}"#)
        var heard: [JSONValue] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            guard let line = agent.nextLine(timeout: max(0.1, deadline.timeIntervalSinceNow)) else { break }
            let value = try JSONParser.parse([UInt8](line))
            if value["id"] == .int(Int64(id)) { return (value["result"] ?? value, heard) }
            if value["method"] == "loginPrompt", let url = value["params"]?["url"]?.stringValue { _ = try FastMCPServer.approve(url) }
            heard.append(value)
        }
        throw CLIHarness.TimedOut(description: "no answer to \(id); stderr:\n\(agent.stderr)")
    }
}
