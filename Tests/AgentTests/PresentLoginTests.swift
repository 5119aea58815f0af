import Foundation
import JSON
import XCTest

/// Issue 34: a host that said `capabilities.presentLogin` in `initialize` presents its logins
/// itself — the agent sends it the `presentLogin` request (an editor opens the URL on the person's
/// side, shows the code, or hands back the redirect it captured) and falls back to `loginPrompt`
/// and its own opener when the host answers an error or nothing within 10 s.
final class PresentLoginTests: XCTestCase {
    private func webAgent(_ h: CLIHarness) throws -> SocketAgentProcess {
        h.issuer.setAutoApprove(username: "alice")
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(h.issuer.baseURL), "clientId": "cli", "openBrowser": false],
                          ["id": "device", "displayName": "Device Login", "flow": "deviceCode", "origins": ["https://device.example"],
                           "issuer": .string(h.issuer.baseURL), "clientId": "cli"]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        return try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
    }

    private func presenting(_ agent: SocketAgentProcess, _ capability: JSONValue = ["openUrl": true, "askRedirect": true, "showCode": true]) throws -> SocketClient {
        let host = try SocketClient(agent.path, timeout: 30)
        XCTAssertNotNil(host.call("initialize", ["protocolVersion": "1", "capabilities": ["presentLogin": capability]], id: 0)?["result"])
        return host
    }

    func testTheHostOpensTheBrowserAndTheLoginCompletes() throws {
        let h = try CLIHarness()
        let agent = try webAgent(h)
        let host = try presenting(agent)
        host.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "web"]])
        let asked = try XCTUnwrap(host.next())
        XCTAssertEqual(asked["method"], "presentLogin", "a request, not loginPrompt: \(asked)")
        let agentId = try XCTUnwrap(asked["id"])
        let p = try XCTUnwrap(asked["params"])
        XCTAssertEqual([p["kind"], p["provider"], p["displayName"], p["requestId"]], ["browser", "web", "Web SSO", 1])
        let url = try XCTUnwrap(p["url"]?.stringValue)
        XCTAssertTrue(p["redirectUri"]?.stringValue?.hasPrefix("http://127.0.0.1:") == true, "\(p)")
        XCTAssertNotNil(p["expiresAt"]?.stringValue)
        // The editor's browser: signs in and follows the redirect to the agent's loopback listener.
        _ = try Browser().navigate(url, stopAt: { _ in false })
        host.send(["jsonrpc": "2.0", "id": agentId, "result": ["opened": true]])
        let answer = try XCTUnwrap(host.next())
        XCTAssertEqual(answer["result"]?["account"], "alice", "\(answer)")
        XCTAssertTrue(host.notifications.isEmpty, "no loginPrompt when the host presented it: \(host.notifications)")
        _ = agent
    }

    func testARedirectTheHostCapturedCompletesTheLoginOnceAndIsCheckedLikeAPaste() throws {
        let h = try CLIHarness()
        let agent = try webAgent(h)
        let host = try presenting(agent, ["askRedirect": true])
        for (id, forge) in [(1, true), (2, false)] {
            host.send(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": "login", "params": ["provider": "web"]])
            let asked = try XCTUnwrap(host.next())
            XCTAssertEqual(asked["method"], "presentLogin", "\(asked)")
            let url = try XCTUnwrap(asked["params"]?["url"]?.stringValue)
            var redirect = try XCTUnwrap(try Browser().navigate(url, stopAt: { $0.path == "/callback" }).location)
            if forge { redirect = redirect.replacingOccurrences(of: "state=", with: "state=x") }
            host.send(["jsonrpc": "2.0", "id": try XCTUnwrap(asked["id"]), "result": ["redirectUrl": .string(redirect)]])
            if forge {
                // Another login's state is refused, as a pasted one is: the login goes on waiting; the host cancels it.
                let fellBack = try XCTUnwrap(host.next())
                XCTAssertEqual(fellBack["method"], "loginPrompt", "no answer to the login yet: \(fellBack)")
                host.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": .int(Int64(id))]])
                XCTAssertEqual(host.next()?["error"]?["code"], -32800)
            } else {
                XCTAssertEqual(host.next()?["result"]?["account"], "alice")
            }
        }
        _ = agent
    }

    func testAHostThatDoesNotAnswerGetsTheAgentsOwnPromptWithinTenSeconds() throws {
        let h = try CLIHarness()
        let agent = try webAgent(h)
        let host = try presenting(agent)
        host.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "web"]])
        XCTAssertEqual(host.next()?["method"], "presentLogin")
        let started = Date()
        let prompt = try XCTUnwrap(host.next())
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(prompt["method"], "loginPrompt", "\(prompt)")
        XCTAssertGreaterThan(waited, 9)
        XCTAssertLessThan(waited, 15)
        _ = try Browser().navigate(try XCTUnwrap(prompt["params"]?["url"]?.stringValue), stopAt: { _ in false })
        XCTAssertEqual(host.next()?["result"]?["account"], "alice")
        _ = agent
    }

    func testAnErrorFallsBackAtOnceAndACancelEndsTheLogin() throws {
        let h = try CLIHarness()
        let agent = try webAgent(h)
        let host = try presenting(agent)
        host.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "web"]])
        let asked = try XCTUnwrap(host.next())
        host.send(["jsonrpc": "2.0", "id": try XCTUnwrap(asked["id"]), "error": ["code": -32601, "message": "Method not found"]])
        let prompt = try XCTUnwrap(host.next())
        XCTAssertEqual(prompt["method"], "loginPrompt", "an error falls back at once: \(prompt)")
        host.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 1]])
        XCTAssertEqual(host.next()?["error"]?["code"], -32800)

        host.send(["jsonrpc": "2.0", "id": 2, "method": "login", "params": ["provider": "web"]])
        let again = try XCTUnwrap(host.next())
        XCTAssertEqual(again["method"], "presentLogin")
        host.send(["jsonrpc": "2.0", "id": try XCTUnwrap(again["id"]), "result": ["cancelled": true]])
        let ended = try XCTUnwrap(host.next())
        XCTAssertEqual(ended["id"], 2)
        XCTAssertEqual(ended["error"]?["code"], -32800, "the person declined: the login ends: \(ended)")
        XCTAssertEqual(h.issuer.count("token.authorization_code"), 0)
        _ = agent
    }

    func testADeviceCodeIsShownByTheHostAndAHostWithoutTheCapabilityGetsLoginPrompt() throws {
        let h = try CLIHarness()
        let agent = try webAgent(h)
        let host = try presenting(agent, ["showCode": true])
        host.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "device"]])
        let asked = try XCTUnwrap(host.next())
        XCTAssertEqual(asked["method"], "presentLogin", "\(asked)")
        XCTAssertEqual(asked["params"]?["kind"], "deviceCode")
        let code = try XCTUnwrap(asked["params"]?["userCode"]?.stringValue)
        XCTAssertNotNil(asked["params"]?["verificationUri"]?.stringValue)
        host.send(["jsonrpc": "2.0", "id": try XCTUnwrap(asked["id"]), "result": ["opened": true]])
        XCTAssertTrue(h.issuer.approveDevice(userCode: code, username: "alice"))
        XCTAssertEqual(host.next()?["result"]?["account"], "alice")

        // A host that only declared showCode is not asked to present a browser login.
        host.send(["jsonrpc": "2.0", "id": 2, "method": "login", "params": ["provider": "web"]])
        XCTAssertEqual(host.next()?["method"], "loginPrompt")
        host.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 2]])
        XCTAssertEqual(host.next()?["error"]?["code"], -32800)

        let plain = try SocketClient(agent.path)
        plain.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "web"]])
        XCTAssertEqual(plain.next()?["method"], "loginPrompt", "a host without the capability sees today's behaviour")
        _ = agent
    }
}
