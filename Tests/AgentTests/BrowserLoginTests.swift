import DevIssuer
import Foundation
import JSON
import TestSupport
import XCTest

/// Browser-login paths a transcript cannot express: forged and stalled callbacks
/// from other local processes, and what reaches the browser opener.
final class BrowserLoginTests: XCTestCase {
    private var issuer: DevIssuer!
    private var directory: URL!

    override func setUpWithError() throws {
        issuer = DevIssuer()
        _ = try issuer.start(port: 0)
        directory = try TemporaryDirectory(prefix: "auth-agent-browser").url
    }

    override func tearDown() {
        issuer.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// An agent with a browser login `web` and a device login `device`, both on the dev issuer.
    private func agent(environment: [String: String] = [:]) throws -> AgentConversation {
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [
                ["id": "web", "displayName": "Web", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                 "issuer": .string(issuer.baseURL), "clientId": "cli", "scopes": ["openid"]],
                ["id": "device", "displayName": "Device", "flow": "deviceCode", "origins": ["https://device.example.com"],
                 "issuer": .string(issuer.baseURL), "clientId": "cli"],
            ],
        ]
        let path = directory.appendingPathComponent("config.json")
        try Data(JSONSerializer.bytes(config)).write(to: path)
        return try AgentConversation(arguments: ["--config", path.path], environment: environment)
    }

    /// The authorization URL and the loopback callback of a login's prompt.
    private func prompted(_ agent: AgentConversation) throws -> (url: String, callback: URLComponents) {
        let prompt = try agent.notification("loginPrompt")
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue)
        let redirect = try XCTUnwrap(URLComponents(string: url)?.queryItems?.first { $0.name == "redirect_uri" }?.value)
        XCTAssertTrue(redirect.hasPrefix("http://127.0.0.1:") && redirect.hasSuffix("/callback"), redirect)
        return (url, try XCTUnwrap(URLComponents(string: redirect)))
    }

    func testCallbackWithAWrongStateIsAnsweredAndIgnored() throws {
        let agent = try agent()
        let login = try agent.send("login", ["provider": "web"])
        let (url, callback) = try prompted(agent)

        // A page (or a local process) that tries to complete someone's login with its own code,
        // with a wrong state and with none: each gets an error page, and the login waits on.
        let browser = Browser(timeout: 10)
        for query in ["?code=attacker-code&state=not-the-state", "?code=attacker-code"] {
            let forged = try browser.fetch("GET", try XCTUnwrap(URL(string: callback.string! + query)), form: nil)
            XCTAssertEqual(forged.status, 400)
            XCTAssertTrue(forged.body.contains("not the one the application is waiting for"), forged.body)
        }
        XCTAssertEqual(issuer.count("token.authorization_code"), 0, "the forged code was never exchanged")

        issuer.setAutoApprove(username: "alice")
        XCTAssertTrue(try browser.navigate(url).body.contains("You are signed in to Web"))
        let answer = try agent.answer(to: login)
        XCTAssertEqual(answer["result"]?["user"]?["sub"], "alice", "\(answer)")
    }

    /// A local process that trickles bytes into the callback port does not keep the browser waiting.
    func testStalledCallbackConnectionDoesNotHoldUpTheBrowser() throws {
        let agent = try agent()
        let login = try agent.send("login", ["provider": "web"])
        let (url, callback) = try prompted(agent)
        let stall = try SlowClient(port: UInt16(try XCTUnwrap(callback.port)))
        defer { stall.stop() }
        Thread.sleep(forTimeInterval: 0.3)

        issuer.setAutoApprove(username: "alice")
        XCTAssertTrue(try Browser(timeout: 10).navigate(url).body.contains("You are signed in to Web"))
        let answer = try agent.answer(to: login, timeout: 10)
        XCTAssertEqual(answer["result"]?["user"]?["sub"], "alice", "\(answer)")
    }

    /// Cancelling a browser login ends it even while a connection stalls, and frees its provider:
    /// later requests for it are answered.
    func testCancelEndsAStalledBrowserLoginAndFreesItsProvider() throws {
        let agent = try agent()
        let login = try agent.send("login", ["provider": "web"])
        let (_, callback) = try prompted(agent)
        let stall = try SlowClient(port: UInt16(try XCTUnwrap(callback.port)))
        defer { stall.stop() }
        Thread.sleep(forTimeInterval: 0.3)

        try agent.agent.send(JSONSerializer.string(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": login]]))
        XCTAssertEqual(try agent.answer(to: login, timeout: 5)["error"]?["code"], -32800)
        let sign = try agent.call("sign", ["request": ["method": "GET", "url": "https://web.example.com/x"]], timeout: 5)
        XCTAssertEqual(sign["error"]?["code"], 1001, "\(sign)")
        XCTAssertEqual(try agent.call("logout", ["provider": "web"], timeout: 5)["result"], ["revoked": false])
        let again = try agent.send("login", ["provider": "web"])
        _ = try prompted(agent)
        try agent.agent.send(JSONSerializer.string(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": again]]))
        XCTAssertEqual(try agent.answer(to: again, timeout: 5)["error"]?["code"], -32800)
    }

    /// A verification URI the server sends is opened, and shown, only when it is https or
    /// loopback http. The opener is a stand-in on PATH that records what it was given.
    func testUnsafeVerificationURIsAreRefused() throws {
        let bin = directory.appendingPathComponent("bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opened = directory.appendingPathComponent("opened")
        for name in ["xdg-open", "open"] {
            let script = bin.appendingPathComponent(name)
            try "#!/bin/sh\nprintf '%s\\n' \"$@\" >> '\(opened.path)'\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        }
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let agent = try agent(environment: ["PATH": path])

        for bad in ["file:///etc/passwd", "javascript:alert(1)", "-a Calculator", "--help", "http://phish.example.com/device"] {
            issuer.setDeviceVerificationURI(bad)
            let login = try agent.send("login", ["provider": "device", "openBrowser": true])
            let answer = try agent.notificationOrAnswer("loginPrompt", to: login, timeout: 10)
            XCTAssertEqual(answer["error"]?["code"], 1008, "\(bad): \(answer)")
            XCTAssertEqual(answer["error"]?["data"]?["reason"], "loginDenied")
        }
        Thread.sleep(forTimeInterval: 0.5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: opened.path), "nothing was opened: \((try? String(contentsOf: opened, encoding: .utf8)) ?? "")")

        issuer.setDeviceVerificationURI(nil)
        let login = try agent.send("login", ["provider": "device", "openBrowser": true])
        let prompt = try agent.notification("loginPrompt")
        let complete = try XCTUnwrap(prompt["params"]?["verificationUriComplete"]?.stringValue)
        var recorded = ""
        for _ in 0..<100 where recorded.isEmpty {
            Thread.sleep(forTimeInterval: 0.05)
            recorded = (try? String(contentsOf: opened, encoding: .utf8)) ?? ""
        }
        XCTAssertEqual(recorded, complete + "\n", "a loopback verification URI is opened, as the only argument")
        try agent.agent.send(JSONSerializer.string(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": login]]))
        XCTAssertEqual(try agent.answer(to: login, timeout: 5)["error"]?["code"], -32800)
    }

    /// The schema holds every transcript's prompts to the same rule.
    func testSchemaAllowsOnlyHTTPLoginURLs() throws {
        let schema = try SchemaValidator.load()
        func prompt(_ url: String) -> JSONValue {
            ["jsonrpc": "2.0", "method": "loginPrompt",
             "params": ["provider": "web", "requestId": 1, "url": .string(url), "expiresAt": "2030-01-01T00:00:00Z"]]
        }
        XCTAssertNil(schema.check(message: prompt("https://id.example.com/authorize?x=1"), methodOf: { _ in nil }))
        XCTAssertNotNil(schema.check(message: prompt("file:///etc/passwd"), methodOf: { _ in nil }))
        XCTAssertNotNil(schema.check(message: prompt("-a Calculator"), methodOf: { _ in nil }))
    }
}
