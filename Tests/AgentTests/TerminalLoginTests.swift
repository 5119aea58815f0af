import DevIssuer
import Foundation
import JSON
import JSONRPC
import Locking
import XCTest

/// `auth-agent login` and the interactive kubectl plugin at a terminal, driven through a
/// pseudo-terminal (Tests/CLI/pty_drive.py) that is the process's controlling terminal.
final class TerminalLoginTests: XCTestCase {
    override func setUpWithError() throws { try CLIHarness.requirePython() }

    func testPasswordLoginAtTheTerminalDoesNotEchoThePassword() throws {
        let h = try CLIHarness()
        let screen = try onTerminal(h, ["login", "corp"], steps: [["expect": "username: ", "send": "alice\n"], ["expect": "Password: ", "send": "wonderland\n"]])
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("Corp SSO username: alice"), "the username is echoed: \(screen.output)")
        XCTAssertFalse(screen.output.contains("wonderland"), "the password is not echoed: \(screen.output)")
        XCTAssertTrue(screen.output.contains("Logged in to Corp SSO as alice"), screen.output)
        XCTAssertEqual(try h.agent(["status", "--json"]).stdout.contains("\"loggedIn\""), true)
    }

    /// Issue 31 item 4: `auth-agent` typed bare at a terminal says what it started and where the
    /// commands people type are; Ctrl-D ends it as end of input ends the agent.
    func testBareAgentAtATerminalSaysWhatItIs() throws {
        let h = try CLIHarness()
        let screen = try onTerminal(h, [], steps: [["expect": "auth-agent --help", "send": "\u{4}"]])
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("serving JSON-RPC 2.0 on stdin/stdout"), screen.output)
    }

    func testCtrlCAtThePasswordPromptCancels() throws {
        let h = try CLIHarness()
        let screen = try onTerminal(h, ["login", "corp"], steps: [["expect": "username: ", "send": "alice\n"], ["expect": "Password: ", "send": "^C"]])
        XCTAssertEqual(screen.status, 130, screen.output)
        XCTAssertEqual(h.issuer.count("token"), 0, "nothing was sent")
        XCTAssertEqual(try h.agent(["token", "corp"]).status, 1, "still logged out")
    }

    /// The device code is shown (also when stderr is hidden, as tools running a helper do) and
    /// approving it at the issuer completes the login.
    func testDeviceLoginShowsTheCodeEvenWithStderrHidden() throws {
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let log = h.directory.appendingPathComponent("pty.log")
        let approver = Thread { h.approveDeviceWhenShown(log: log) }
        approver.start()
        let screen = try onTerminal(h, [], steps: [], environment: ["PTY_LOG": log.path], shell: #"exec "$AGENT" login device 2>/dev/null"#)
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("enter the code"), screen.output)
        XCTAssertEqual(try h.agent(["token", "device"]).status, 0)
    }

    func testCtrlCCancelsAWaitingDeviceLogin() throws {
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let screen = try onTerminal(h, ["login", "device"], steps: [["expect": "Ctrl-C cancels", "send": "^C", "delay": 1.5]])
        XCTAssertEqual(screen.status, 130, screen.output)
        XCTAssertTrue(screen.output.contains("interrupted"), screen.output)
        let status = try JSONParser.parse(try h.agent(["status", "--json"]).stdout)
        XCTAssertEqual(status["providers"]?.arrayValue?.first { $0["id"] == "device" }?["state"], "loggedOut")
        let stored = try FileManager.default.contentsOfDirectory(atPath: h.directory.appendingPathComponent("store").path)
        XCTAssertFalse(stored.contains { $0.hasPrefix("device.json") }, "\(stored)")
    }

    /// Two interactive kubectl plugin runs for one provider: the second waits for the first's
    /// login instead of prompting, then answers with the session it left in the store.
    func testParallelInteractivePluginsLogInOnce() throws {
        let h = try CLIHarness()
        let info = ["KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#]
        let lockFile = h.directory.appendingPathComponent("store/corp.login.lock").path
        let second = Locked<CLIHarness.Finished?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            // Starts once the first holds the login lock (it is prompting); no terminal of its own.
            for _ in 0..<400 where !FileManager.default.fileExists(atPath: lockFile) { usleep(50_000) }
            let r = try? h.agent(["kubectl-credential", "corp"], environment: info, timeout: 60)
            second.withLock { $0 = r }
            done.signal()
        }
        let first = try onTerminal(h, ["kubectl-credential", "corp"],
                              steps: [["expect": "username: ", "send": "alice\n", "delay": 3], ["expect": "Password: ", "send": "wonderland\n"]], environment: info)
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertTrue(first.output.contains("\"apiVersion\":\"client.authentication.k8s.io/v1beta1\""), first.output)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let r = try XCTUnwrap(second.current)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("waiting"), r.stderr)
        let credential = try JSONParser.parse(r.stdout)
        XCTAssertEqual(credential["kind"], "ExecCredential")
        XCTAssertNotNil(credential["status"]?["token"]?.stringValue)
        XCTAssertEqual(h.issuer.count("token.password"), 1, "one login for both")
    }

    /// The same through a socket agent: the agent asks the first plugin's terminal for the fields
    /// (`loginFields`) under the provider's one-login lock, so the second waits and answers from
    /// that login instead of asking a terminal it does not have.
    func testParallelInteractivePluginsThroughTheSocketLogInOnce() throws {
        let h = try CLIHarness()
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
        let info = ["KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#,
                    "AUTH_AGENT_SOCK": agent.path]
        // The second starts once the first is asking its person (its terminal shows the prompt).
        let log = h.directory.appendingPathComponent("pty.log")
        let second = Locked<CLIHarness.Finished?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for _ in 0..<400 where !((try? String(contentsOf: log, encoding: .utf8))?.contains("username: ") ?? false) { usleep(50_000) }
            let r = try? h.agent(["kubectl-credential", "corp"], environment: info, timeout: 60)
            second.withLock { $0 = r }
            done.signal()
        }
        let first = try onTerminal(h, ["kubectl-credential", "corp"],
                              steps: [["expect": "username: ", "send": "alice\n", "delay": 3], ["expect": "Password: ", "send": "wonderland\n"]],
                              environment: info.merging(["PTY_LOG": log.path]) { $1 })
        XCTAssertEqual(first.status, 0, first.output)
        XCTAssertTrue(first.output.contains("\"apiVersion\":\"client.authentication.k8s.io/v1beta1\""), first.output)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let r = try XCTUnwrap(second.current)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertNotNil(try JSONParser.parse(r.stdout)["status"]?["token"]?.stringValue)
        XCTAssertEqual(h.issuer.count("token.password"), 1, "one login for both")
        _ = agent
    }
}
