import DevIssuer
import Foundation
import JSON
import XCTest

/// Issue 20, items 4–6 against the built binary: a first run, `config add` against the dev issuer's
/// discovery, `refresh` and `token --min-valid`, what to do next, and `--log-level debug`.
final class CommandLineSetupTests: XCTestCase {
    /// With no configuration, every command says where it is expected and how to start.
    func testNoConfigurationSaysHowToStart() throws {
        let h = try CLIHarness()
        let empty = ["AUTH_AGENT_CONFIG": "", "XDG_CONFIG_HOME": h.directory.appendingPathComponent("fresh").path]
        let expected = h.directory.appendingPathComponent("fresh/auth-agent/config.json").path
        XCTAssertEqual(try h.agent(["config", "path"], environment: empty).stdout, expected + "\n")
        for command in [["token", "corp"], ["login", "corp"], ["status"], ["config", "check"], ["git-credential", "configure"]] {
            let r = try h.agent(command, environment: empty)
            XCTAssertTrue(r.stderr.contains("no configuration at \(expected)") && r.stderr.contains("auth-agent config add ID --issuer URL")
                          && r.stderr.contains("auth-agent demo"), "\(command): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("known: ."), r.stderr)
        }
        XCTAssertEqual(try h.agent(["config", "check"], environment: empty).status, 2)
        XCTAssertEqual(try h.agent(["token", "corp"], environment: empty).status, 2)

        // The agent itself: the hint on stderr at start, and an answer that says how to start.
        let served = try h.agent([], stdin: #"{"jsonrpc":"2.0","id":1,"method":"token","params":{"provider":"corp"}}"# + "\n", environment: empty)
        XCTAssertTrue(served.stderr.contains("no configuration at \(expected)") && served.stderr.contains("Serving no providers."), served.stderr)
        let answer = try JSONParser.parse(served.stdout)
        XCTAssertEqual(answer["error"]?["message"], "No provider \"corp\" is configured; there is no configuration yet ('auth-agent config add' adds a provider).")
    }

    /// Issue 29 item 9: a secret added to an existing world-readable file leaves it readable by its
    /// owner alone; a file holding a secret that others can read is named by `config check` and at
    /// every start (a warning: the secret may already have been read, and is rotated at the server).
    func testAFileHoldingASecretIsWrittenPrivateAndAReadableOneIsWarnedAbout() throws {
        let h = try CLIHarness()
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.configPath.path)
        XCTAssertFalse(try h.agent(["config", "check"]).stderr.contains("client secret"), "no secret, no warning")
        let add = try h.agent(["config", "add", "sso", "--issuer", h.issuer.baseURL, "--client-id", "cli", "--origin", "https://sso-api.example",
                               "--client-secret-stdin"], stdin: "client-SECRET\n")
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: h.configPath.path)[.posixPermissions] as? Int, 0o600)

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.configPath.path)
        let warning = "holds a client secret and other users can read it (mode 644); run: chmod go-r \(h.configPath.path)"
        let check = try h.agent(["config", "check"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stderr.contains(warning), check.stderr)
        let status = try h.agent(["status"])
        XCTAssertTrue(status.stderr.contains(warning), status.stderr)
        let served = try h.agent([], stdin: #"{"jsonrpc":"2.0","id":1,"method":"ping"}"# + "\n")
        XCTAssertTrue(served.stderr.contains(warning), served.stderr)
        XCTAssertFalse((check.stderr + status.stderr + served.stderr).contains("client-SECRET"))
    }

    /// `config add` discovers the issuer, shows the endpoints, writes a provider (0700/0600 when
    /// created, the rest of the file kept); `config check` and `config remove`.
    func testConfigAddCheckRemove() throws {
        let h = try CLIHarness()
        let base = h.issuer.baseURL
        let path = h.directory.appendingPathComponent("new/dir/config.json").path
        let add = try h.agent(["config", "add", "sso", "--issuer", base, "--client-id", "cli", "--origin", "https://sso-api.example",
                               "--scope", "openid", "--client-secret-stdin", "--config", path], stdin: "client-SECRET\n",
                           environment: ["DISPLAY": ":0", "SSH_CONNECTION": ""])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stderr.contains("token_endpoint") && add.stderr.contains(base + "/token"), "shows the endpoints: \(add.stderr)")
        XCTAssertTrue(add.stderr.contains("auth-agent login sso"), add.stderr)
        // One column for the URLs: `device_authorization_endpoint` is longer than the padding was.
        let urlColumns = Set(add.stderr.split(separator: "\n").filter { $0.hasPrefix("  ") && $0.contains("_endpoint") }
            .compactMap { line in line.range(of: "http").map { line.distance(from: line.startIndex, to: $0.lowerBound) } })
        XCTAssertEqual(urlColumns.count, 1, add.stderr)
        XCTAssertFalse(add.stderr.contains("client-SECRET") || add.stdout.contains("client-SECRET"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: h.directory.appendingPathComponent("new/dir").path)[.posixPermissions] as? Int, 0o700)
        let written = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        XCTAssertEqual(written, ["providers": [["id": "sso", "flow": "authorizationCode", "origins": ["https://sso-api.example"], "issuer": .string(base),
                                                "clientId": "cli", "clientSecret": "client-SECRET", "scopes": ["openid"]]]],
                       "authorizationCode where a browser can be opened: the first of authorizationCode, deviceCode the issuer supports")
        // Issue 31 item 3: with no display (a server, SSH), the device code the issuer offers.
        let headless = h.directory.appendingPathComponent("headless.json").path
        XCTAssertEqual(try h.agent(["config", "add", "sso", "--issuer", base, "--client-id", "cli", "--origin", "https://sso-api.example", "--config", headless],
                                   environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""]).status, 0)
        XCTAssertEqual(try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: headless))))["providers"]?.arrayValue?.first?["flow"], "deviceCode")

        // Into the harness's file: the other providers and keys stay.
        let before = try JSONParser.parse(Array(try Data(contentsOf: h.configPath)))
        let device = try h.agent(["config", "add", "dev2", "--issuer", base, "--client-id", "cli", "--origin", "https://dev2.example", "--flow", "deviceCode",
                                  "--display-name", "Dev Two"])
        XCTAssertEqual(device.status, 0, device.stderr)
        let after = try JSONParser.parse(Array(try Data(contentsOf: h.configPath)))
        XCTAssertEqual(after["store"], before["store"])
        XCTAssertEqual(after["refreshWindowSeconds"], before["refreshWindowSeconds"])
        XCTAssertEqual(Array(after["providers"]?.arrayValue?.prefix(4) ?? []), before["providers"]?.arrayValue)
        XCTAssertEqual(after["providers"]?.arrayValue?.last?["flow"], "deviceCode")
        let check = try h.agent(["config", "check"])
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertTrue(check.stdout.contains("5 providers"), check.stdout)
        XCTAssertTrue(try h.agent(["status"]).stdout.contains("dev2 "))

        // Refused: an id or origin already taken, an issuer without the flow, an issuer that is not one.
        XCTAssertEqual(try h.agent(["config", "add", "dev2", "--issuer", base, "--client-id", "c", "--origin", "https://x.example"]).status, 2)
        XCTAssertEqual(try h.agent(["config", "add", "x", "--issuer", base, "--client-id", "c", "--origin", "https://dev2.example"]).status, 2)
        let nowhere = try h.agent(["config", "add", "x", "--issuer", "http://127.0.0.1:1", "--client-id", "c", "--origin", "https://x.example"])
        XCTAssertNotEqual(nowhere.status, 0)
        XCTAssertTrue(nowhere.stderr.contains("Cannot discover"), nowhere.stderr)
        XCTAssertEqual(try JSONParser.parse(Array(try Data(contentsOf: h.configPath))), after, "nothing written by a refused add")

        XCTAssertEqual(try h.agent(["config", "remove", "dev2"]).status, 0)
        XCTAssertEqual(try JSONParser.parse(Array(try Data(contentsOf: h.configPath))), before)
        XCTAssertEqual(try h.agent(["config", "remove", "dev2"]).status, 2)

        // An invalid file: exit 2 with the message the agent gives at start.
        try Data("{\"providers\": [{\"id\": \"x\"}]}".utf8).write(to: h.configPath)
        let broken = try h.agent(["config", "check"])
        let start = try h.agent(["status"])
        XCTAssertEqual(broken.status, 2)
        XCTAssertEqual(start.status, 2)
        XCTAssertTrue(broken.stderr.hasPrefix("auth-agent: invalid configuration: \(h.configPath.path): $.providers[0]"), broken.stderr)
        XCTAssertEqual(broken.stderr, start.stderr)
    }

    /// Issue 31 item 3: `config set ID KEY VALUE…` edits one key in place — the rest of the file as it
    /// was — checked as the agent reads the file; setting a key back round-trips to the same file.
    /// The README's GitHub line (issue 31 item 1): a provider profile with fixed endpoints needs no
    /// issuer and no flow — the profile gives them (GitHub: the device flow) — and nothing is asked of the network.
    func testConfigAddWithTheGitHubProfile() throws {
        let h = try CLIHarness()
        let path = h.directory.appendingPathComponent("gh.json").path
        let add = try h.agent(["config", "add", "gh", "--profile", "github", "--client-id", "Ov23liABC", "--origin", "https://github.com",
                               "--origin", "https://api.github.com", "--config", path])
        XCTAssertEqual(add.status, 0, add.stderr)
        XCTAssertTrue(add.stderr.contains("device_authorization_endpoint") && add.stderr.contains("https://github.com/login/device/code"), add.stderr)
        let written = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        XCTAssertEqual(written, ["providers": [["id": "gh", "origins": ["https://github.com", "https://api.github.com"], "clientId": "Ov23liABC", "profile": "github"]]])
        let check = try h.agent(["config", "check", "--config", path])
        XCTAssertEqual(check.status, 0, check.stderr)
        // `config set` takes a profile's name or a list of them, as `flow` does.
        let both = try h.agent(["config", "set", "gh", "profile", "github", "fapi2", "--config", path])
        XCTAssertEqual(both.status, 2)
        XCTAssertTrue(both.stderr.contains(#"FAPI 2.0 (profile "fapi2") allows only the authorization code response type"#), "the list is read, and fapi2 refuses the device flow: \(both.stderr)")
        XCTAssertEqual(try h.agent(["config", "set", "gh", "profile", "github", "--config", path]).status, 0)
        let noIssuer = try h.agent(["config", "add", "x", "--client-id", "c", "--origin", "https://x.example", "--config", path])
        XCTAssertEqual(noIssuer.status, 2, "without a profile, --issuer is needed")
    }

    func testConfigSetRoundTrips() throws {
        let h = try CLIHarness()
        let before = try Data(contentsOf: h.configPath)
        let set = try h.agent(["config", "set", "device", "origins", "https://device.example", "https://device2.example"])
        XCTAssertEqual(set.status, 0, set.stderr)
        XCTAssertTrue(set.stderr.contains("Set origins of device"), set.stderr)
        let after = try JSONParser.parse(Array(try Data(contentsOf: h.configPath)))
        let device = after["providers"]?.arrayValue?.first { $0["id"] == "device" }
        XCTAssertEqual(device?["origins"], ["https://device.example", "https://device2.example"])
        XCTAssertEqual(try h.agent(["header", "https://device2.example/x"]).stderr.contains("notCovered"), false, "the new origin is covered")
        XCTAssertEqual(try h.agent(["config", "set", "device", "displayName", "Device Two"]).status, 0)
        XCTAssertTrue(try h.agent(["status", "--json"]).stdout.contains(#""displayName":"Device Two""#))
        XCTAssertEqual(try h.agent(["config", "set", "device", "origins", "https://device.example"]).status, 0)
        XCTAssertEqual(try h.agent(["config", "set", "device", "displayName", "Device Login"]).status, 0)
        XCTAssertEqual(try JSONParser.parse(Array(try Data(contentsOf: h.configPath))), try JSONParser.parse(Array(before)), "set back: the same document")

        // Refused, nothing written: a key the flow does not use (with the nearest it does), a bad value,
        // a secret on the command line, a provider that is not there.
        let unchanged = try Data(contentsOf: h.configPath)
        let typo = try h.agent(["config", "set", "device", "scope", "read"])
        XCTAssertEqual(typo.status, 2)
        XCTAssertTrue(typo.stderr.contains(#"did you mean "scopes"?"#), typo.stderr)
        XCTAssertEqual(try h.agent(["config", "set", "device", "openBrowser", "maybe"]).status, 2)
        XCTAssertEqual(try h.agent(["config", "set", "device", "origins", "ftp://x"]).status, 2)
        let secret = try h.agent(["config", "set", "corp", "clientSecret", "s3cret"])
        XCTAssertEqual(secret.status, 2)
        XCTAssertFalse(secret.stderr.contains("s3cret"), secret.stderr)
        XCTAssertEqual(try h.agent(["config", "set", "nope", "origins", "https://x"]).status, 2)
        XCTAssertEqual(try h.agent(["config", "set", "device", "origins"]).status, 2)
        XCTAssertEqual(try Data(contentsOf: h.configPath), unchanged)
    }

    /// Issue 33 item 2: `client-metadata URL` prints the document to publish at URL; published there
    /// and named as `clientMetadataUrl`, a learned login uses it — the URL as client id, no registration.
    func testTheClientMetadataDocumentItPrintsServesALearnedLogin() throws {
        let h = try CLIHarness()
        h.issuer.setAutoApprove(username: "alice")
        let url = h.issuer.baseURL + "/clients/mine"
        let printed = try h.agent(["client-metadata", url])
        XCTAssertEqual(printed.status, 0, printed.stderr)
        let document = try XCTUnwrap(try JSONParser.parse(printed.stdout).objectValue, printed.stdout)
        XCTAssertEqual(document["client_id"]?.stringValue, url)
        XCTAssertEqual(document["application_type"], "native")
        XCTAssertEqual(document["redirect_uris"], ["http://127.0.0.1/callback"], "any port (RFC 8252): no port in the published URI")
        h.issuer.publishClientMetadataDocument(name: "mine", document: document)
        let config: JSONValue = ["store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)], "providers": [],
                                 "clientMetadataUrl": .string(url)]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        let login = try h.agent(["login", h.issuer.learnableResource], environment: try h.followingBrowser(), timeout: 60)
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertEqual(h.issuer.count("register"), 0, "no registration")
        XCTAssertEqual(h.issuer.count("clientMetadata"), 1, "the document was read")
        XCTAssertEqual(h.issuer.registeredClientIDs, [url])
        XCTAssertEqual(try h.agent(["client-metadata", "https://example.com/"]).status, 2, "a URL without a path")
        XCTAssertEqual(try h.agent(["client-metadata", "http://example.com/c.json"]).status, 2, "plain http off loopback")
    }

    /// Issue 31 item 4: a configuration the server's answers show is wrong is exit 2 naming the key to
    /// fix (1016 `configurationInvalid`, `data.configKey`), not a server outage (1005) or a denial (1008):
    /// an issuer whose discovery document names another one (both named), a client the server does not know.
    func testAConfigurationMistakeIsExitTwoNamingTheKey() throws {
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        h.issuer.injectDiscoveryFault(.wrongIssuer)
        let mismatch = try h.agent(["login", "device"])
        XCTAssertEqual(mismatch.status, 2, mismatch.stderr)
        XCTAssertTrue(mismatch.stderr.contains("configurationInvalid: The discovery document at \(h.issuer.baseURL)"), mismatch.stderr)
        XCTAssertTrue(mismatch.stderr.contains("names the issuer \(h.issuer.baseURL)/other-issuer, not the configured \(h.issuer.baseURL)"), mismatch.stderr)
        XCTAssertTrue(mismatch.stderr.contains("To fix it: auth-agent config set device issuer"), mismatch.stderr)
        h.issuer.clearDiscoveryFaults()

        XCTAssertEqual(try h.agent(["config", "set", "device", "clientId", "nobody"]).status, 0)
        let unknown = try h.agent(["login", "device"])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("configurationInvalid: Device Login refused to start a device login (invalid_client"), unknown.stderr)
        XCTAssertTrue(unknown.stderr.contains("check \"clientId\" in the configuration. To fix it: auth-agent config set device clientId …"), unknown.stderr)

        // Over the protocol: the reason and the key, from the core.
        let served = try h.agent([], stdin: #"{"jsonrpc":"2.0","id":1,"method":"login","params":{"provider":"device"}}"# + "\n")
        let answer = try JSONParser.parse(served.stdout.split(separator: "\n").map(String.init).first { $0.contains("\"id\":1") } ?? "null")
        XCTAssertEqual(answer["error"]?["code"], 1016, "\(answer)")
        XCTAssertEqual(answer["error"]?["data"]?["configKey"], "clientId", "\(answer)")
        XCTAssertEqual(answer["error"]?["data"]?["retryable"], false)
    }

    /// `refresh PROVIDER`, and `token --min-valid` refreshing only when the token lives less than asked.
    func testRefreshAndMinValid() throws {
        let h = try CLIHarness()
        h.issuer.setAccessTokenLifetime(300)
        try h.login()
        let first = try h.agent(["token", "corp"]).stdout
        h.issuer.resetCounts()
        let refreshed = try h.agent(["refresh", "corp"])
        XCTAssertEqual(refreshed.status, 0, refreshed.stderr)
        XCTAssertTrue(refreshed.stderr.contains("Refreshed the token of Corp SSO (token valid until "), refreshed.stderr)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1)
        let second = try h.agent(["token", "corp"]).stdout
        XCTAssertNotEqual(second, first)

        XCTAssertEqual(try h.agent(["token", "corp", "--min-valid", "60"]).stdout, second, "valid long enough: no refresh")
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1)
        h.issuer.setAccessTokenLifetime(600)
        let longer = try h.agent(["token", "corp", "--min-valid", "400"])
        XCTAssertEqual(longer.status, 0, longer.stderr)
        XCTAssertNotEqual(longer.stdout, second)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 2)
        XCTAssertEqual(longer.stderr.contains("less than"), false, longer.stderr)
        let tooLong = try h.agent(["token", "corp", "--min-valid", "3600"])
        XCTAssertEqual(tooLong.status, 0, "printed anyway: \(tooLong.stderr)")
        XCTAssertFalse(tooLong.stdout.isEmpty)
        XCTAssertTrue(tooLong.stderr.contains("less than the 3600 s asked for, even after a refresh"), tooLong.stderr)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 3)

        // A pasted token cannot be refreshed: said, and the session is kept.
        XCTAssertEqual(try h.agent(["login", "pasted", "--token-stdin"], stdin: "pasted-token\n").status, 0)
        let pasted = try h.agent(["refresh", "pasted"])
        XCTAssertEqual(pasted.status, 1)
        XCTAssertTrue(pasted.stderr.contains("cannot be refreshed"), pasted.stderr)
        XCTAssertEqual(try h.agent(["token", "pasted"]).stdout, "pasted-token\n")
    }

    /// What to do next: a login hint from token/header/fetch/refresh, logout of nobody, displayName in messages.
    func testSayWhatToDoNext() throws {
        let h = try CLIHarness()
        for command in [["token", "corp"], ["header", h.issuer.baseURL + "/api"], ["fetch", h.issuer.baseURL + "/api/me"], ["refresh", "corp"]] {
            let r = try h.agent(command)
            XCTAssertEqual(r.status, 1)
            XCTAssertTrue(r.stderr.hasSuffix("Not logged in to Corp SSO. run: auth-agent login corp\n"), "\(command): \(r.stderr)")
        }
        let nobody = try h.agent(["logout", "corp"])
        XCTAssertEqual(nobody.status, 0)
        XCTAssertTrue(nobody.stderr.contains("Nobody is logged in to Corp SSO."), nobody.stderr)
        try h.login()
        let notBob = try h.agent(["logout", "corp", "--account", "bob"])
        XCTAssertEqual(notBob.status, 0)
        XCTAssertTrue(notBob.stderr.contains("Account bob is not logged in to Corp SSO."), notBob.stderr)
        XCTAssertTrue(try h.agent(["logout", "corp"]).stderr.contains("Logged out of Corp SSO"))
        XCTAssertTrue(try h.agent(["logout", "corp", "--all"]).stderr.contains("Nobody is logged in to Corp SSO."))
    }

    /// `git-credential erase` that refreshed tells git's user to run the command again.
    func testGitCredentialEraseSaysToRetry() throws {
        let h = try CLIHarness()
        try h.login()
        let token = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        let request = "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\npassword=\(token)\n"
        let erased = try h.agent(["git-credential", "erase"], stdin: request)
        XCTAssertEqual(erased.status, 0)
        XCTAssertTrue(erased.stderr.contains("was refreshed; run the git command again"), erased.stderr)
        XCTAssertFalse(try h.agent(["git-credential", "erase"], stdin: request).stderr.contains("run the git command again"), "nothing refreshed the second time")
    }

    /// `--log-level debug` (in any position): one line per auth-server and fetch request, no secret, no query.
    func testDebugLogsEachRequest() throws {
        let h = try CLIHarness()
        let login = try h.agent(["--log-level", "debug", "login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(login.status, 0, login.stderr)
        let port = h.issuer.port
        XCTAssertNotNil(login.stderr.range(of: #"auth-agent: debug: POST http://127\.0\.0\.1:\#(port)/token → 200 \(\d+ ms\)\n"#, options: .regularExpression), login.stderr)
        let token = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        let fetch = try h.agent(["fetch", h.issuer.baseURL + "/api/me?secret=QUERY-SECRET", "--log-level=debug"])
        XCTAssertNotNil(fetch.stderr.range(of: #"debug: GET http://127\.0\.0\.1:\#(port)/api/me → 200 \(\d+ ms\)"#, options: .regularExpression), fetch.stderr)
        for output in [login.stderr, fetch.stderr] {
            XCTAssertFalse(output.contains("wonderland") || output.contains(token) || output.contains("QUERY-SECRET"), output)
        }
    }

    /// `git-credential configure URL` writes `credential.URL.helper` once, in a form git runs.
    func testGitCredentialConfigure() throws {
        guard let git = CLIHarness.which("git") else { throw XCTSkip("git is not installed") }
        let h = try CLIHarness()
        let gitconfig = h.directory.appendingPathComponent("gitconfig").path
        let environment = ["GIT_CONFIG_GLOBAL": gitconfig, "GIT_CONFIG_NOSYSTEM": "1"]
        let url = h.issuer.baseURL
        for _ in 0..<2 { XCTAssertEqual(try h.agent(["git-credential", "configure", url], environment: environment).status, 0) }
        let helpers = try CLIHarness.run(git, ["config", "--global", "--get-all", "credential.\(url).helper"], environment: environment)
        XCTAssertEqual(helpers.stdout, "\(AgentProcess.binaryURL.resolvingSymlinksInPath().path) git-credential\n", "one line, an absolute path (not on PATH)")
        try h.login()
        let token = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        let filled = try CLIHarness.run(git, ["credential", "fill"], stdin: "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\n\n",
                                        environment: h.environment.merging(environment) { $1 })
        XCTAssertTrue(filled.stdout.contains("password=\(token)\n"), "git asks the agent through the line: \(filled.stdout) \(filled.stderr)")
        XCTAssertEqual(try h.agent(["git-credential", "configure"], environment: environment).status, 0, "every provider's https origins")
        let all = try CLIHarness.run(git, ["config", "--global", "--get-regexp", "credential\\..*\\.helper"], environment: environment)
        XCTAssertTrue(all.stdout.contains("credential.https://git.pasted.example.helper ") && all.stdout.contains("credential.https://device.example.helper "), all.stdout)
        XCTAssertFalse(all.stdout.contains("credential.http://127.0.0.1:\(h.issuer.port)/"), all.stdout)
    }

    func testHelpVersionAndManPage() throws {
        let h = try CLIHarness()
        let version = try h.agent(["--version"])
        XCTAssertEqual(version.status, 0)
        XCTAssertTrue(version.stdout.hasPrefix("auth-agent 0."), version.stdout)
        let token = try h.agent(["token", "--help"])
        XCTAssertEqual(token.status, 0)
        XCTAssertTrue(token.stdout.hasPrefix("Usage: auth-agent token PROVIDER"), token.stdout)
        XCTAssertFalse(token.stdout.contains("kubectl"), "only token's options")
        XCTAssertEqual(try h.agent(["help", "token"]).stdout, token.stdout)
        let man = try h.agent(["help", "--man"])
        XCTAssertTrue(man.stdout.hasPrefix(".TH AUTH-AGENT 1"), man.stdout)
        if let groff = CLIHarness.which("man") {
            let page = h.directory.appendingPathComponent("auth-agent.1")
            try Data(man.stdout.utf8).write(to: page)
            let rendered = try CLIHarness.run(groff, ["-l", page.path], environment: ["MANPAGER": "cat", "MANWIDTH": "100"])
            XCTAssertEqual(rendered.status, 0, rendered.stderr)
            XCTAssertTrue(rendered.stdout.contains("--min-valid SECONDS"), rendered.stdout)
        }
        let completion = try h.agent(["__complete-providers"])
        XCTAssertEqual(completion.stdout, "corp\npasted-git\ndevice\npasted\n")
        XCTAssertEqual(try h.agent(["__complete-providers", "--learned"]).stdout, "", "nothing learned: nothing to forget")
        XCTAssertEqual(try h.agent(["completion", "bash"]).status, 0)
    }
}
