import DevIssuer
import Foundation
import JSON
import XCTest

/// Issue 29 item 14: over SSH without a display, a login naming no flow uses the device code
/// where the server offers one — a learned API whose metadata lists a device endpoint, a
/// configured provider listing both flows whose discovery document (or configuration) has one —
/// and the browser login with its redirect pasted back where it does not; `status.interactive` follows.
final class SSHLoginTests: XCTestCase {
    private static let ssh = ["SSH_CONNECTION": "10.0.0.2 50000 10.0.0.1 22", "DISPLAY": "", "WAYLAND_DISPLAY": ""]

    /// The prompt of `login` (naming no flow), then `status` asked once the prompt came, from an
    /// agent over SSH without a display.
    private func loginThenStatus(_ h: CLIHarness, _ login: JSONValue) throws -> (prompt: JSONValue?, status: JSONValue?) {
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path,
                                           environment: h.environment.merging(Self.ssh) { $1 })
        let client = try SocketClient(agent.path)
        client.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": login])
        let prompt = client.next()
        let status = client.call("status", id: 2)?["result"]
        client.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 1]])
        _ = client.next()  // the login's answer: cancelled
        _ = agent.stop()
        return (prompt?["params"], status)
    }

    private func interactive(_ status: JSONValue?, _ id: String) -> JSONValue? {
        status?["providers"]?.arrayValue?.first { $0["id"]?.stringValue == id }?["interactive"]
    }

    func testALearnedAPIWhoseServerOffersTheDeviceFlowUsesIt() throws {
        let h = try CLIHarness()
        let (prompt, _) = try loginThenStatus(h, ["resource": .string(h.issuer.baseURL + "/mcp")])
        XCTAssertNotNil(prompt?["userCode"], "\(String(describing: prompt))")
        let other = try CLIHarness()
        other.issuer.injectDiscoveryFault(.noDeviceFlow)
        let (browser, _) = try loginThenStatus(other, ["resource": .string(other.issuer.baseURL + "/mcp")])
        XCTAssertNotNil(browser?["url"], "no device flow at that server: the URL to open elsewhere, pasted back: \(String(describing: browser))")
    }

    func testAConfiguredProviderListingBothFlowsUsesTheDeviceCodeOnlyWhereItsServerOffersOne() throws {
        for offered in [true, false] {
            let h = try CLIHarness()
            if !offered { h.issuer.injectDiscoveryFault(.noDeviceFlow) }
            let config: JSONValue = [
                "store": ["kind": "memory"],
                "providers": [["id": "both", "displayName": "Both", "flow": ["authorizationCode", "deviceCode"], "origins": ["https://both.example"],
                               "issuer": .string(h.issuer.baseURL), "clientId": "cli"]],
            ]
            try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
            let (prompt, status) = try loginThenStatus(h, ["provider": "both"])
            if offered {
                XCTAssertNotNil(prompt?["userCode"], "\(String(describing: prompt))")
                XCTAssertEqual(interactive(status, "both"), "device")
            } else {
                XCTAssertNotNil(prompt?["url"], "\(String(describing: prompt))")
                XCTAssertNil(prompt?["userCode"])
                XCTAssertEqual(interactive(status, "both"), "paste", "the discovery document read for the login says no device flow")
            }
        }
    }
}
