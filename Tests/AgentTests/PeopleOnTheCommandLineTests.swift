@testable import auth_agent
import AuthCore
import Foundation
import JSON
import XCTest

/// Issue 20 items 2 and 3 on the command line: people shown and named by the names they log in
/// with, not by the server's ids; one provider with several flows, chosen by the login flags.
final class PeopleOnTheCommandLineTests: XCTestCase {
    /// One provider for the dev issuer with the password and the device flow, and userinfo.
    private func harness() throws -> CLIHarness {
        let h = try CLIHarness()
        let base = h.issuer.baseURL
        let config: JSONValue = [
            "store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)],
            "providers": [
                ["id": "dot", "displayName": "DOT", "flow": ["password", "deviceCode"], "origins": [.string(base)],
                 "tokenEndpoint": .string(base + "/token"), "deviceAuthorizationEndpoint": .string(base + "/device_authorization"),
                 "userinfoEndpoint": .string(base + "/userinfo"), "clientId": "cli"],
            ],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        return h
    }

    /// django-oauth-toolkit's userinfo says only `sub`: `login` says "as alice", not "as 1"; the status
    /// table shows alice and bob beside accounts 1 and 2; `--account bob` and git's username reach bob.
    func testPeopleAreShownAndNamedByTheNamesTheyLogInWith() throws {
        let h = try harness()
        h.issuer.answerNext("userinfo", status: 200, body: #"{"sub":"1"}"#)
        let alice = try h.agent(["login", "dot", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(alice.status, 0, alice.stderr)
        XCTAssertTrue(alice.stdout.hasPrefix("Logged in to DOT as alice ("), alice.stdout)
        h.issuer.answerNext("userinfo", status: 200, body: #"{"sub":"2"}"#)
        XCTAssertEqual(try h.agent(["login", "dot", "--username", "bob", "--password-stdin"], stdin: "builder\n").status, 0)

        let rows = try h.agent(["status"]).stdout.split(separator: "\n").filter { $0.hasPrefix("dot ") }.map {
            $0.split(separator: " ").dropLast(2).joined(separator: " ")  // without EXPIRES and STORE
        }
        XCTAssertEqual(rows, ["dot 1 * loggedIn alice", "dot 2 loggedIn bob"])
        let me = try h.agent(["fetch", "--account", "Bob", h.issuer.baseURL + "/api/me"])
        XCTAssertTrue(me.stdout.contains(#""sub":"bob""#), me.stdout + me.stderr)
        let bob = try h.agent(["token", "dot", "--account", "bob"]).stdout
        XCTAssertEqual(try h.agent(["token", "dot", "--account", "2"]).stdout, bob)
        let get = try h.agent(["git-credential", "get"], stdin: "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\nusername=bob\n")
        XCTAssertEqual(get.stdout.split(separator: "\n").prefix(2), ["username=bob", "password=\(bob.trimmingCharacters(in: .newlines))"])
        XCTAssertEqual(try h.agent(["logout", "dot", "--account", "alice"]).status, 0)
        XCTAssertEqual(try h.agent(["token", "dot"]).stdout, bob, "alice's account ended, bob's is the default")

        // A third account whose email is "Bob": git's username bob fits two accounts, so git gets no
        // answer (it asks its other helpers) and the person is told which accounts it fits.
        h.issuer.answerNext("userinfo", status: 200, body: #"{"sub":"3","email":"Bob"}"#)
        XCTAssertEqual(try h.agent(["login", "dot", "--username", "bob", "--password-stdin"], stdin: "builder\n").status, 0)
        let ambiguous = try h.agent(["git-credential", "get"], stdin: "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\nusername=bob\n")
        XCTAssertEqual(ambiguous.status, 0)
        XCTAssertEqual(ambiguous.stdout, "")
        XCTAssertTrue(ambiguous.stderr.contains(#""bob" names several accounts of DOT: 2 (bob), 3 (Bob)"#), ambiguous.stderr)
        let token = try h.agent(["token", "dot", "--account", "bob"])
        XCTAssertEqual(token.status, 1, "the same for --account")
        XCTAssertTrue(token.stderr.contains("names several accounts"), token.stderr)
    }

    /// `--browser` asks for a flow this provider does not list: exit 2, naming the ones it does.
    func testALoginFlagForAFlowTheProviderLacksIsAUsageError() throws {
        let h = try harness()
        let browser = try h.agent(["login", "dot", "--browser"])
        XCTAssertEqual(browser.status, 2)
        XCTAssertTrue(browser.stderr.contains("--browser: DOT has no authorizationCode login; its flows: password, deviceCode"), browser.stderr)
    }

    /// The flags choose among the provider's flows; none of them, its default.
    func testTheLoginFlagsChooseTheFlow() throws {
        var sso = ProviderConfig(id: "sso", displayName: "SSO", flow: .deviceCode)
        sso.flows = [.deviceCode, .authorizationCode, .password]
        typealias Options = TerminalLogin.Options
        XCTAssertEqual(try TerminalLogin.flow(Options(), provider: sso), .deviceCode)
        XCTAssertEqual(try TerminalLogin.flow(Options(flow: .browser), provider: sso), .authorizationCode)
        XCTAssertEqual(try TerminalLogin.flow(Options(flow: .device), provider: sso), .deviceCode)
        XCTAssertEqual(try TerminalLogin.flow(Options(passwordStdin: true), provider: sso), .password)
        XCTAssertEqual(try TerminalLogin.flow(Options(username: "alice"), provider: sso), .password)
        XCTAssertThrowsError(try TerminalLogin.flow(Options(tokenStdin: true), provider: sso))
        XCTAssertThrowsError(try TerminalLogin.flow(Options(passwordStdin: true, flow: .device), provider: sso)) { error in
            XCTAssertEqual((error as? ToolFailure)?.message, "--device and --password-stdin choose different ways to log in")
        }
        let api = ProviderConfig(id: "api", flow: .session)
        XCTAssertEqual(try TerminalLogin.flow(Options(passwordStdin: true), provider: api), .session)
    }
}
