import DevIssuer
import Foundation
import JSON
import Wire
import XCTest

/// Issue 31 item 3: `auth-agent setup` (and `login` with no provider at a terminal) asks what to
/// sign in to, writes the provider with `config add`'s checks, prints the `config add` line, and
/// logs in — driven on a pseudo-terminal (Tests/CLI/pty_drive.py), answers typed, output read.
final class SetupTests: XCTestCase {
    override func setUpWithError() throws { try CLIHarness.requirePython() }

    /// A configuration with a store and no provider: a first run.
    private func firstRun(_ h: CLIHarness) throws {
        let config: JSONValue = ["store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)], "providers": []]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
    }

    /// `setup` on a pty up to a device login approved as alice: `choosing` the steps up to the issuer's
    /// prompt, then the issuer typed, client `cli` with no secret, one origin, the default flow (the
    /// device code: no display) and `name` (nil: the suggested one).
    private func setUpWithADeviceLogin(_ h: CLIHarness, choosing: [JSONValue], issuerPrompt: String, namePrompt: String, name: String?) throws -> TerminalScreen {
        let log = h.directory.appendingPathComponent("pty.log")
        let approver = Thread { h.approveDeviceWhenShown(log: log) }
        approver.start()
        return try onTerminal(h, ["setup"], steps: .array(choosing + [
            ["expect": .string(issuerPrompt), "send": .string(h.issuer.baseURL + "\n")],
            ["expect": "Client ID: ", "send": "cli\n"],
            ["expect": "Client secret (Enter for none, as a public client has): ", "send": "\n"],
            ["expect": "separated by spaces (https://api.example.com): ", "send": "https://api.example.com\n"],
            ["expect": "Choose 1-2 [2]: ", "send": "\n"],
            ["expect": .string(namePrompt), "send": .string((name ?? "") + "\n")],
        ]), environment: ["PTY_LOG": log.path, "DISPLAY": "", "WAYLAND_DISPLAY": ""])
    }

    /// A generic issuer: discovered, the client id typed, the device code chosen by default (no
    /// display), the provider written and logged in, the equivalent `config add` line printed.
    func testSetupWritesAGenericIssuerAndLogsIn() throws {
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        try firstRun(h)
        let screen = try setUpWithADeviceLogin(h, choosing: [
            ["expect": "Choose 1-9 [9]: ", "send": "12\n"],
            ["expect": "a number from 1 to 9", "send": ""],
            ["expect": "Choose 1-9 [9]: ", "send": "8\n"],
        ], issuerPrompt: "issuer's URL (https://…): ", namePrompt: "to type in commands [corp]: ", name: "work")
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("redirect URI http://127.0.0.1/callback"), "says what to register: \(screen.output)")
        XCTAssertTrue(screen.output.contains("auth-agent config add work --issuer \(h.issuer.baseURL) --client-id cli --origin https://api.example.com --flow deviceCode"),
                      screen.output)
        XCTAssertTrue(screen.output.contains("Logged in to work as alice"), screen.output)
        let written = try JSONParser.parse(String(contentsOf: h.configPath, encoding: .utf8))
        let provider = try XCTUnwrap(written["providers"]?.arrayValue?.first)
        XCTAssertEqual(provider["id"], "work")
        XCTAssertEqual(provider["flow"], "deviceCode")
        XCTAssertEqual(provider["clientId"], "cli")
        XCTAssertNil(provider["clientSecret"], "no secret typed, none written")
        XCTAssertEqual(try h.agent(["token", "work"]).status, 0, "the session is in the store")
    }

    /// A provider profile (Keycloak, whose realm here is the dev issuer): the issuer's shape shown, the
    /// page to register a client at named, the profile written with the provider and in the printed line.
    func testSetupWithAProviderProfile() throws {
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        try firstRun(h)
        let screen = try setUpWithADeviceLogin(h, choosing: [
            ["expect": "7) Keycloak", "send": ""],
            ["expect": "Choose 1-9 [9]: ", "send": "7\n"],
        ], issuerPrompt: "(https://{host}/realms/{realm}, your own in place of {…}): ", namePrompt: "to type in commands [keycloak]: ", name: nil)
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("register a public (native) client at the realm's admin console"), screen.output)
        XCTAssertTrue(screen.output.contains("auth-agent config add keycloak --issuer \(h.issuer.baseURL) --client-id cli --profile keycloak"), screen.output)
        XCTAssertTrue(screen.output.contains("Logged in to keycloak as alice"), screen.output)
        let written = try JSONParser.parse(String(contentsOf: h.configPath, encoding: .utf8))
        XCTAssertEqual(written["providers"]?.arrayValue?.first?["profile"], "keycloak")
    }

    /// An API's URL: nothing to configure; the agent learns the login and the browser completes it.
    func testLoginWithoutAProviderAsksAndLearnsAnAPI() throws {
        let h = try CLIHarness()
        try firstRun(h)
        h.issuer.setAutoApprove(username: "alice")
        let browser = try h.followingBrowser()
        let screen = try onTerminal(h, ["login"], steps: [
            ["expect": "Choose 1-9 [9]: ", "send": "\n"],
            ["expect": "The API's URL (https://…): ", "send": "not a url\n"],
            ["expect": "The API's URL (https://…): ", "send": .string(h.issuer.learnableResource + "\n")],
        ], environment: browser)
        XCTAssertEqual(screen.status, 0, screen.output)
        XCTAssertTrue(screen.output.contains("expected an absolute https URL"), screen.output)
        // Issue 31 item 4: the person a learned API's login signed in, from its server's userinfo.
        XCTAssertTrue(screen.output.contains("Logged in to \(h.issuer.learnableResource) as alice"), screen.output)
        XCTAssertTrue(screen.output.contains("Next time (or from a script): auth-agent login \(h.issuer.learnableResource)"), screen.output)
        XCTAssertEqual(h.issuer.count("register"), 1)
        // The learned API is something to show: `status` no longer says nothing is configured.
        let status = try h.agent(["status"])
        XCTAssertTrue(status.stdout.contains("loggedIn"), status.stdout)
        XCTAssertFalse(status.stderr.contains("no provider in") || status.stderr.contains("no configuration"), status.stderr)
        // Completion offers the learned id too, and `forget`'s only the learned ones.
        let learned = try XCTUnwrap(try JSONParser.parse(status.stdout.isEmpty ? "{}" : try h.agent(["status", "--json"]).stdout)["providers"]?.arrayValue?.first?["id"]?.stringValue)
        XCTAssertEqual(try h.agent(["__complete-providers"]).stdout, learned + "\n")
        XCTAssertEqual(try h.agent(["__complete-providers", "--learned"]).stdout, learned + "\n")
    }

    /// Issue 31 item 4: `login URL --as NAME` gives the learned API that id, for every later command;
    /// a name is given once — an API learned already under another id is refused, nothing changed.
    func testLoginURLAsNameGivesTheLearnedAPIItsId() throws {
        let h = try CLIHarness()
        try firstRun(h)
        h.issuer.setAutoApprove(username: "alice")
        let browser = try h.followingBrowser()
        let login = try h.agent(["login", h.issuer.learnableResource, "--as", "work-mcp"], environment: browser, timeout: 60)
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertEqual(try h.agent(["__complete-providers", "--learned"]).stdout, "work-mcp\n")
        XCTAssertEqual(try h.agent(["token", "work-mcp"]).status, 0, "the name is the provider id")
        let again = try h.agent(["login", h.issuer.learnableResource, "--as", "other"], environment: browser)
        XCTAssertEqual(again.status, 2, again.stderr)
        XCTAssertTrue(again.stderr.contains("is learned already, as work-mcp; 'forget' it first to learn it as other"), again.stderr)
        XCTAssertEqual(try h.agent(["login", "corp", "--as", "x"]).status, 2, "--as is for a URL")
        XCTAssertEqual(try h.agent(["login", h.issuer.learnableResource, "--as", "Not Valid"]).status, 2)
    }

    /// Issue 33 item 6: `learn.redirectPort` (what `mcp --callback-port` sets) is the port a learned
    /// server's browser login listens on and the one registered with its new client.
    func testALearnedLoginListensOnTheConfiguredRedirectPort() throws {
        let h = try CLIHarness()
        let (fd, port) = try LoopbackSocket.makeListener(port: 0)
        LoopbackSocket.closeDescriptor(fd)
        let config: JSONValue = ["store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)], "providers": [],
                                 "learn": ["redirectPort": .int(Int64(port))]]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        h.issuer.setAutoApprove(username: "alice")
        let login = try h.agent(["login", h.issuer.learnableResource], environment: try h.followingBrowser(), timeout: 60)
        XCTAssertEqual(login.status, 0, login.stderr)
        let client = try XCTUnwrap(h.issuer.registeredClientIDs.first)
        XCTAssertEqual(h.issuer.registration(of: client)?["redirect_uris"], [.string("http://127.0.0.1:\(port)/callback")])
    }

    /// A script's `login` with no provider is still the usage mistake (exit 2), with nothing asked.
    func testLoginWithoutAProviderFromAScriptIsAUsageError() throws {
        let h = try CLIHarness()
        let r = try h.agent(["login"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("'login' needs exactly one PROVIDER"), r.stderr)
        XCTAssertEqual(try h.agent(["setup", "extra"]).status, 2)
    }
}
