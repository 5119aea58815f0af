import Foundation
import JSON
import Locking
import XCTest

/// Issue 30 item 3: one interactive login per provider across every process of the user, decided in
/// the core — a host's RPC `login` and the command line's `auth-agent login` started together make
/// one authorization: the second waits for the first and answers with its session.
final class OneLoginTests: XCTestCase {
    func testAnRPCLoginAndACommandLineLoginStartedTogetherMakeOneAuthorization() throws {
        let h = try CLIHarness()
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
        let host = try SocketClient(agent.path)
        host.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "device"]])
        let prompt = try XCTUnwrap(host.next())
        let userCode = try XCTUnwrap(prompt["params"]?["userCode"]?.stringValue, "\(prompt)")

        // The command line, in-process on the same store (no AUTH_AGENT_SOCK), while the host's login waits.
        let cli = Locked<CLIHarness.Finished?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            cli.withLock { $0 = try? h.agent(["login", "device"], timeout: 60) }
            done.signal()
        }
        let lockFile = h.directory.appendingPathComponent("store/device.login.lock").path
        XCTAssertTrue(FileManager.default.fileExists(atPath: lockFile), "the host's login holds the provider's login lock")
        usleep(1_500_000)  // the command line is waiting for it by now (it says so on stderr)
        XCTAssertTrue(h.issuer.approveDevice(userCode: userCode, username: "alice"))
        let answer = try XCTUnwrap(host.next())
        XCTAssertEqual(answer["result"]?["account"], "alice", "\(answer)")

        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let r = try XCTUnwrap(cli.current)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("another login to device is in progress; waiting for it to finish"), r.stderr)
        XCTAssertTrue(r.stdout.contains("Logged in to Device Login as alice"), r.stdout)
        XCTAssertFalse(r.stderr.contains("enter the code"), "the command line asked nobody: \(r.stderr)")
        XCTAssertEqual(h.issuer.count("deviceAuthorization"), 1, "one authorization for both")
        _ = agent
    }

    /// A host that said `capabilities.loginFields` is asked for a password login's fields by the agent
    /// (`loginFields`), with the provider and the fields; its answer logs in, its refusal cancels (1008).
    func testAHostThatAsksItsPersonIsAskedForTheFields() throws {
        let h = try CLIHarness()
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
        let host = try SocketClient(agent.path)
        XCTAssertNotNil(host.call("initialize", ["protocolVersion": "1", "capabilities": ["loginFields": true]])?["result"])
        for (id, answer) in [(2, JSONValue.null), (3, ["username": "alice", "password": "wonderland"])] {
            host.send(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": "login", "params": ["provider": "corp"]])
            let asked = try XCTUnwrap(host.next())
            XCTAssertEqual(asked["method"], "loginFields", "\(asked)")
            XCTAssertEqual(asked["params"]?["provider"], "corp")
            XCTAssertEqual(asked["params"]?["requestId"], .int(Int64(id)))
            XCTAssertEqual(asked["params"]?["fields"]?.arrayValue?.compactMap { $0["name"]?.stringValue }, ["username", "password"])
            let agentId = try XCTUnwrap(asked["id"])
            if answer.isNull {
                host.send(["jsonrpc": "2.0", "id": agentId, "error": ["code": -32800, "message": "the person went away"]])
                XCTAssertEqual(host.next()?["error"]?["code"], 1008, "cancelled")
            } else {
                host.send(["jsonrpc": "2.0", "id": agentId, "result": answer])
                XCTAssertEqual(host.next()?["result"]?["account"], "alice")
            }
        }
        XCTAssertEqual(h.issuer.count("token.password"), 1, "nothing was sent for the refused one")
        _ = agent
    }
}
