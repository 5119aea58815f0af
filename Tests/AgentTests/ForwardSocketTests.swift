import Foundation
import JSON
import XCTest

/// Issue 29 items 1 and 2: a forward socket (`serve --forward-socket F --forward-providers …`)
/// serves the providers it names and nothing else of the laptop — not the APIs the laptop
/// learned, not its network, not the power to learn, forget, log out or finish the laptop's logins.
final class ForwardSocketTests: XCTestCase {
    private static let alice: JSONValue = ["provider": "corp", "credentials": ["username": "alice", "password": "wonderland"]]

    private func start(_ harness: CLIHarness, forwarding providers: String) throws -> (agent: SocketAgentProcess, forward: String) {
        let forward = harness.directory.appendingPathComponent("fwd/agent.sock").path
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path,
                                           arguments: ["--forward-socket", forward, "--forward-providers", providers], environment: harness.environment)
        return (agent, forward)
    }

    /// Learns the dev issuer's MCP resource through `socket` (a browser login the test's browser finishes); its provider id.
    private func learn(_ harness: CLIHarness, through socket: SocketClient) throws -> String {
        harness.issuer.setAutoApprove(username: "alice")
        socket.send(["jsonrpc": "2.0", "id": 50, "method": "login", "params": ["resource": .string(harness.issuer.baseURL + "/mcp"), "openBrowser": false]])
        let prompt = try XCTUnwrap(socket.next())
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "\(prompt)")
        _ = try Browser().navigate(url)
        let answer = try XCTUnwrap(socket.next())
        return try XCTUnwrap(answer["result"]?["provider"]?.stringValue, "\(answer)")
    }

    private func ids(_ status: JSONValue?) -> [String]? {
        status?["result"]?["providers"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
    }

    /// Item 1: an API the laptop learned does not exist on the forward socket (absent from
    /// `status`, 1002 for `token`, unsigned for `sign`, refused unsent by `fetch`) unless
    /// `--forward-providers` names it — which it may now do.
    func testLearnedAPIsExistOnAForwardSocketOnlyWhenNamed() throws {
        let harness = try CLIHarness()
        var (agent, forwardPath) = try start(harness, forwarding: "corp")
        let local = try SocketClient(agent.path)
        let learned = try learn(harness, through: local)
        let resource = harness.issuer.baseURL + "/mcp"
        XCTAssertNotNil(local.call("token", ["provider": .string(learned)], id: 2)?["result"]?["accessToken"]?.stringValue)
        usleep(600_000)  // past the forward service's 250 ms store watch, which would have picked the API up

        let remote = try SocketClient(forwardPath)
        XCTAssertEqual(ids(remote.call("status")), ["corp"])
        XCTAssertEqual(remote.call("token", ["provider": .string(learned)], id: 2)?["error"]?["code"], 1002)
        // The resource's URL falls to what the forward socket has: corp, whose origins cover the
        // dev issuer's (nobody is logged in to it), never the learned API's token.
        let signed = remote.call("sign", ["request": ["method": "POST", "url": .string(resource)]], id: 3)
        XCTAssertEqual(signed?["error"]?["data"]?["provider"], "corp", "\(String(describing: signed))")
        harness.issuer.resetCounts()
        let fetched = remote.call("fetch", ["request": ["method": "GET", "url": .string(resource)]], id: 4)
        XCTAssertEqual(fetched?["error"]?["data"]?["provider"], "corp", "\(String(describing: fetched))")
        XCTAssertEqual(harness.issuer.count("mcp"), 0, "nothing sent")
        _ = agent.stop()

        // Named, it is served there like a configured provider (the file store keeps what was learned).
        (agent, forwardPath) = try start(harness, forwarding: "corp,\(learned)")
        let named = try SocketClient(forwardPath)
        XCTAssertEqual(ids(named.call("status")), ["corp", learned])
        XCTAssertNotNil(named.call("token", ["provider": .string(learned)], id: 2)?["result"]?["accessToken"]?.stringValue)
        _ = agent.stop()

        // A name that is neither configured nor learned is still a mistake worth stopping for.
        let typo = try CLIHarness.run(AgentProcess.binaryURL.path, ["serve", "--socket", harness.directory.appendingPathComponent("run2/agent.sock").path,
                                                                    "--forward-socket", harness.directory.appendingPathComponent("fwd2/agent.sock").path,
                                                                    "--forward-providers", "corp,nope"], environment: harness.environment)
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stderr.contains("\"nope\""), typo.stderr)
    }

    /// Item 2: on a forward socket, what would change the laptop's sessions and providers, or make
    /// it fetch and register where the caller says, answers 1015 and sends nothing; logging in to a
    /// forwarded provider, and finishing a login started there, stay allowed.
    func testAForwardSocketCannotLearnForgetLogOutOrFinishAnotherSocketsLogin() throws {
        let harness = try CLIHarness()
        let (agent, forwardPath) = try start(harness, forwarding: "corp")
        let local = try SocketClient(agent.path)
        let learned = try learn(harness, through: local)
        XCTAssertNotNil(local.call("login", Self.alice, id: 2)?["result"])
        let remote = try SocketClient(forwardPath)

        harness.issuer.resetCounts()
        let probe = remote.call("login", ["resource": .string(harness.issuer.baseURL.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/admin")])
        XCTAssertEqual(probe?["error"]?["code"], 1015, "\(String(describing: probe))")
        XCTAssertEqual(probe?["error"]?["data"]?["reason"], "notAllowed")
        for (id, call) in [("forget", ["provider": .string(learned)]), ("logout", ["provider": "corp", "all": true]),
                           ("setDefaultAccount", ["provider": "corp", "account": "alice"])] as [(String, JSONValue)] {
            XCTAssertEqual(remote.call(id, call)?["error"]?["code"], 1015, id)
        }
        XCTAssertEqual(harness.issuer.counts.filter { $0.value > 0 }, [:], "nothing was sent for any of them")
        XCTAssertNotNil(local.call("token", ["provider": .string(learned)], id: 3)?["result"]?["accessToken"]?.stringValue, "not forgotten")
        XCTAssertNotNil(remote.call("token", ["provider": "corp"], id: 4)?["result"]?["accessToken"]?.stringValue, "not logged out")
        XCTAssertNotNil(remote.call("login", Self.alice, id: 5)?["result"], "a forwarded provider's login is what forwarding is for")

        // A browser login the laptop started cannot be finished from the forward socket.
        local.send(["jsonrpc": "2.0", "id": 60, "method": "login", "params": ["resource": .string(harness.issuer.baseURL + "/mcp"), "openBrowser": false]])
        let prompt = try XCTUnwrap(local.next())
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue, "\(prompt)")
        let redirect = try XCTUnwrap(try Browser().navigate(url, stopAt: { $0.path == "/callback" }).location)
        let taken = remote.call("completeLogin", ["requestId": 60, "redirectUrl": .string(redirect)], id: 6)
        XCTAssertEqual(taken?["error"]?["code"], 1015, "\(String(describing: taken))")
        XCTAssertEqual(local.call("completeLogin", ["requestId": 60, "redirectUrl": .string(redirect)], id: 7)?["result"], [:], "still waiting for its own")
        XCTAssertEqual(local.next()?["id"], 60)
    }
}
