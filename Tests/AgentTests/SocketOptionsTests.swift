import JSON
import JSONRPC
import XCTest
@testable import auth_agent

/// The socket agent's pure parts: its command line, shell quoting, the default path, and what a
/// `loginPrompt` notification becomes at the terminal.
final class SocketOptionsTests: XCTestCase {
    func testSocketOptionsParseAndCombinationsThatWouldBeIgnoredAreRefused() throws {
        XCTAssertEqual(try Arguments.parse(["serve", "--socket"]).socket, SocketOptions())
        XCTAssertEqual(try Arguments.parse(["serve", "--socket", "/r/a.sock", "--daemon"]).socket, SocketOptions(path: "/r/a.sock", daemon: true))
        XCTAssertEqual(try Arguments.parse(["--socket=/r/a.sock", "--log-level", "info"]).socket?.path, "/r/a.sock")
        XCTAssertEqual(try Arguments.parse(["serve", "--socket", "--forward-socket", "/f.sock", "--forward-providers", "a,b"]).socket,
                       SocketOptions(path: nil, forwardPath: "/f.sock", forwardProviders: ["a", "b"]))
        XCTAssertTrue(try Arguments.parse(["serve", "--stop"]).stop)
        XCTAssertEqual(try Arguments.parse(["connect"]).command, .connect)
        XCTAssertEqual(try Arguments.parse(["--config", "c.json", "connect", "--socket", "/a.sock"]).socket?.path, "/a.sock")
        XCTAssertThrowsError(try Arguments.parse(["connect", "--daemon", "--socket"]))
        XCTAssertThrowsError(try Arguments.parse(["serve", "connect"]))
        for refused in [["serve", "--daemon"], ["serve", "--forward-socket", "/f"], ["serve", "--socket", "--forward-socket", "/f"],
                        ["serve", "--socket", "--forward-providers", "a"], ["serve", "--socket", "--forward-socket", "/f", "--forward-providers", "a,,b"],
                        ["serve", "--stop", "--socket"], ["demo", "--socket"], ["dev-issuer", "--socket"]] {
            XCTAssertThrowsError(try Arguments.parse(refused), "\(refused)")
        }
    }

    /// Issue 29 item 5: the caps per socket, their defaults, and what the descriptor limit leaves of them.
    func testConnectionCapsParseAndTheDescriptorLimitBoundsThem() throws {
        XCTAssertEqual(SocketOptions().maxConnections, 512)
        XCTAssertEqual(SocketOptions().forwardMaxConnections, 64)
        let parsed = try Arguments.parse(["serve", "--socket", "--max-connections", "100", "--forward-socket", "/f.sock", "--forward-providers", "a",
                                          "--forward-max-connections=8"]).socket
        XCTAssertEqual(parsed?.maxConnections, 100)
        XCTAssertEqual(parsed?.forwardMaxConnections, 8)
        for refused in [["serve", "--max-connections", "8"], ["serve", "--socket", "--forward-max-connections", "8"],
                        ["serve", "--socket", "--max-connections", "0"], ["serve", "--socket", "--max-connections", "many"],
                        ["serve", "--stop", "--max-connections", "8"], ["connect", "--socket", "/a.sock", "--max-connections", "8"]] {
            XCTAssertThrowsError(try Arguments.parse(refused), "\(refused)")
        }
        XCTAssertTrue(try XCTUnwrap(CommandHelp.usage(of: "serve")).contains("--forward-max-connections N"))
        // Under 1024 descriptors the defaults fit; under 256 both shrink, the forward socket to half of what is left.
        XCTAssertTrue(DescriptorBudget.caps(main: 512, forward: 64, limit: 1024) == (512, 64))
        XCTAssertTrue(DescriptorBudget.caps(main: 512, forward: 64, limit: 256) == (48, 48))
        XCTAssertTrue(DescriptorBudget.caps(main: 512, forward: nil, limit: 256) == (96, 0))
        XCTAssertTrue(DescriptorBudget.caps(main: 512, forward: 64, limit: 100) == (1, 1))
    }

    func testShellQuotingAndDefaultPath() {
        XCTAssertEqual(SocketAgent.shellQuoted("/run/user/1000/auth-agent/agent.sock"), "/run/user/1000/auth-agent/agent.sock")
        XCTAssertEqual(SocketAgent.shellQuoted("/tmp/a b/it's;$(x)"), "'/tmp/a b/it'\\''s;$(x)'")
        XCTAssertEqual(UnixSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]), "/run/user/7/auth-agent/agent.sock")
        XCTAssertEqual(UnixSocket.defaultPath(environment: [:]), "/tmp/auth-agent-\(geteuid())/agent.sock")
        XCTAssertEqual(UnixSocket.defaultPath(environment: ["XDG_RUNTIME_DIR": "relative"]), "/tmp/auth-agent-\(geteuid())/agent.sock")
    }

    func testLoginPromptNotificationsBecomeTerminalPrompts() {
        let device: JSONValue = ["provider": "p", "requestId": 1, "userCode": "ABCD-EFGH", "verificationUri": "https://id.example/device",
                                 "expiresAt": "2030-01-01T00:00:00Z"]
        let browser: JSONValue = ["provider": "p", "requestId": 1, "url": "https://id.example/authorize?x=1", "expiresAt": "2030-01-01T00:00:00Z"]
        XCTAssertTrue(TerminalLogin.promptText(TerminalLogin.loginPrompt(device)!, displayName: "P").contains("enter the code ABCD-EFGH"))
        XCTAssertTrue(TerminalLogin.promptText(TerminalLogin.loginPrompt(browser)!, displayName: "P").contains("https://id.example/authorize?x=1"))
        XCTAssertNil(TerminalLogin.loginPrompt(["provider": "p"]))
    }
}
