import DevIssuer
import Foundation
import JSON
import XCTest

/// The one-shot subcommands against the real binary, a dev issuer and a file store.
final class CommandLineTests: XCTestCase {
    func testTokenHeaderStatusAndLogoutShareTheStore() throws {
        let h = try CLIHarness()
        try h.login()
        let token = try h.agent(["token", "corp"])
        XCTAssertEqual(token.status, 0, token.stderr)
        let accessToken = token.stdout.trimmingCharacters(in: .newlines)
        XCTAssertFalse(accessToken.isEmpty)
        XCTAssertEqual(token.stdout, accessToken + "\n", "the token alone on stdout")

        let json = try JSONParser.parse(try h.agent(["token", "corp", "--json"]).stdout)
        XCTAssertEqual(json["accessToken"]?.stringValue, accessToken)
        XCTAssertEqual(json["tokenType"], "Bearer")
        XCTAssertNotNil(json["expiresAt"]?.stringValue)

        let header = try h.agent(["header", h.issuer.baseURL + "/api/items"])
        XCTAssertEqual(header.status, 0, header.stderr)
        XCTAssertEqual(header.stdout, "Authorization: Bearer \(accessToken)\n")

        let table = try h.agent(["status"])
        XCTAssertEqual(table.status, 0)
        let corpRow = table.stdout.split(separator: "\n").first { $0.hasPrefix("corp ") }.map(String.init) ?? ""
        XCTAssertTrue(corpRow.contains("loggedIn") && corpRow.contains("alice") && corpRow.contains("file"), table.stdout)
        let status = try JSONParser.parse(try h.agent(["status", "--json"]).stdout)
        XCTAssertEqual(status["providers"]?.arrayValue?.first?["state"], "loggedIn")
        XCTAssertFalse(table.stdout.contains(accessToken) || table.stderr.contains(accessToken))

        XCTAssertEqual(try h.agent(["logout", "corp"]).status, 0)
        let after = try h.agent(["token", "corp"])
        XCTAssertEqual(after.status, 1)
        XCTAssertEqual(after.stdout, "")
        XCTAssertTrue(after.stderr.contains("notLoggedIn"), after.stderr)
    }

    /// Issue 15 on the command line: `--account` picks an account, the status table has a row per
    /// account (`*` the default), `logout --account` ends one and `logout --all` every one.
    func testAccountsOnTheCommandLine() throws {
        let h = try CLIHarness()
        try h.login()
        try h.login(as: ("bob", "builder"))
        let alice = try h.agent(["token", "corp"]).stdout
        let bob = try h.agent(["token", "corp", "--account", "bob"]).stdout
        XCTAssertFalse(alice.isEmpty || bob.isEmpty)
        XCTAssertNotEqual(alice, bob)
        XCTAssertEqual(try h.agent(["header", h.issuer.baseURL + "/api/items", "--account=bob"]).stdout, "Authorization: Bearer \(bob)")
        let me = try h.agent(["fetch", "--account", "bob", h.issuer.baseURL + "/api/me"])
        XCTAssertTrue(me.stdout.contains("\"sub\":\"bob\""), me.stdout)
        let carol = try h.agent(["token", "corp", "--account", "carol"])
        XCTAssertEqual(carol.status, 1)
        XCTAssertTrue(carol.stderr.contains("Account carol is not logged in to"), carol.stderr)

        let rows = try h.agent(["status"]).stdout.split(separator: "\n").filter { $0.hasPrefix("corp ") }
        XCTAssertEqual(rows.count, 2, "\(rows)")
        XCTAssertTrue(rows[0].contains("alice *") && rows[1].contains("bob") && !rows[1].contains("*"), "\(rows)")

        XCTAssertEqual(try h.agent(["logout", "corp", "--account", "alice"]).status, 0)
        XCTAssertEqual(try h.agent(["token", "corp"]).stdout, bob, "bob is the default now")
        try h.login()
        XCTAssertEqual(try h.agent(["logout", "corp", "--all"]).status, 0)
        XCTAssertEqual(try h.agent(["token", "corp"]).status, 1)
        XCTAssertEqual(try h.agent(["logout", "corp", "--all", "--account", "bob"]).status, 2)
    }

    /// A token in the store is refreshed by a one-shot `token` when it expires, through the same lock and store.
    func testTokenRefreshesAnExpiredToken() throws {
        let h = try CLIHarness(refreshWindowSeconds: 1)
        h.issuer.setAccessTokenLifetime(2)
        try h.login()
        // The login's process received the token before it ended: it has expired 2 s from here.
        let expired = Date().addingTimeInterval(2.2)
        let first = try h.agent(["token", "corp"]).stdout
        h.issuer.setAccessTokenLifetime(300)
        Thread.sleep(until: expired)
        h.issuer.resetCounts()
        let second = try h.agent(["token", "corp"])
        XCTAssertEqual(second.status, 0, second.stderr)
        XCTAssertNotEqual(second.stdout, first)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1)
        XCTAssertEqual(try h.agent(["token", "corp"]).stdout, second.stdout, "the refreshed token was saved for the next process")
    }

    /// Issue 19.7: each `git-credential` is a new process, so the refresh limit is counted in the
    /// store: git's get/erase rounds on a token the server keeps refusing refresh 5 times in 30 s, not once each.
    func testTheRefreshLimitHoldsAcrossHelperProcesses() throws {
        let h = try CLIHarness()
        try h.login()
        let request = "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\npath=repo.git\n"
        h.issuer.resetCounts()
        var refused: [String] = []
        for _ in 0..<7 {
            let get = try h.agent(["git-credential", "get"], stdin: request)
            let password = get.stdout.split(separator: "\n").first { $0.hasPrefix("password=") } ?? ""
            let erase = try h.agent(["git-credential", "erase"], stdin: request + password + "\n")
            if erase.status != 0 { refused.append(erase.stderr) }
        }
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 5)
        XCTAssertEqual(refused.count, 2, "\(refused)")
        XCTAssertTrue(refused.allSatisfy { $0.contains("refreshed 5 times within 30 s") }, "\(refused)")
    }

    /// `auth-agent fetch`: the body on stdout, signed, one refresh and resend after a 401; curl's exit codes.
    func testFetchSignsRetriesOnceAndExitsLikeCurl() throws {
        let h = try CLIHarness()
        let base = h.issuer.baseURL
        let loggedOut = try h.agent(["fetch", base + "/api/me"])
        XCTAssertEqual(loggedOut.status, 1, "not logged in: \(loggedOut.stderr)")
        XCTAssertTrue(loggedOut.stderr.contains("notLoggedIn"), loggedOut.stderr)
        try h.login()

        let me = try h.agent(["fetch", base + "/api/me"])
        XCTAssertEqual(me.status, 0, me.stderr)
        XCTAssertEqual(try JSONParser.parse(me.stdout)["sub"], "alice")

        h.issuer.rejectAPINext(1)
        h.issuer.resetCounts()
        let retried = try h.agent(["fetch", "-i", base + "/api/me"])
        XCTAssertEqual(retried.status, 0, retried.stderr)
        XCTAssertTrue(retried.stdout.hasPrefix("HTTP/1.1 200\r\n"), retried.stdout)
        XCTAssertTrue(retried.stdout.contains("content-type: application/json\r\n\r\n{"), retried.stdout)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1)
        XCTAssertEqual(h.issuer.count("api"), 2)

        let posted = try h.agent(["fetch", "-X", "PUT", "-H", "Content-Type: text/plain", "-d", "hi there", base + "/api/echo"])
        XCTAssertEqual(try JSONParser.parse(posted.stdout), ["method": "PUT", "contentType": "text/plain", "body": "hi there"])

        h.issuer.rejectAPINext(2)
        let refused = try h.agent(["fetch", base + "/api/me"])
        XCTAssertEqual(refused.status, 22, "HTTP 401 after the one retry: curl's --fail code")
        XCTAssertTrue(refused.stdout.contains("invalid_token"), "the body is still printed: \(refused.stdout)")

        let unreachable = try h.agent(["fetch", "http://127.0.0.1:1/nothing"])
        XCTAssertEqual(unreachable.status, 1)
        XCTAssertTrue(unreachable.stderr.contains("requestFailed"), unreachable.stderr)
        XCTAssertEqual(try h.agent(["fetch", "-H", "no colon", base + "/api/me"]).status, 2)
        XCTAssertFalse(me.stderr.contains("Bearer") || retried.stdout.contains("Bearer "), "no token in the output")
    }

    func testExitCodes() throws {
        let h = try CLIHarness()
        XCTAssertEqual(try h.agent(["status"]).status, 0)
        XCTAssertEqual(try h.agent(["token", "corp"]).status, 1, "not logged in")
        let wrong = try h.agent(["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wrong\n")
        XCTAssertEqual(wrong.status, 1)
        XCTAssertTrue(wrong.stderr.contains("invalidCredentials"), wrong.stderr)
        XCTAssertFalse(wrong.stderr.contains("wrong"), "no password in messages")
        XCTAssertEqual(try h.agent(["token", "nosuch"]).status, 2, "unknown provider")
        XCTAssertEqual(try h.agent(["token"]).status, 2, "missing provider")
        XCTAssertEqual(try h.agent(["status", "--bogus"]).status, 2)
        for shape in [["--scope", "a b"], ["--audience", ""], ["--resource", "not-absolute"]] {
            let r = try h.agent(["token", "corp"] + shape)
            XCTAssertEqual(r.status, 2, "\(shape) is checked as the protocol checks it: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(shape[0]), r.stderr)
        }
        XCTAssertEqual(try h.agent(["login", "corp", "--token-stdin"], stdin: "x\n").status, 2, "--token-stdin on a password provider")
        XCTAssertEqual(try h.agent(["token", "corp"], environment: ["AUTH_AGENT_CONFIG": h.directory.appendingPathComponent("none.json").path]).status, 2)
        h.issuer.failNext(10, status: 503)
        let down = try h.agent(["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(down.status, 3, down.stderr)
        XCTAssertTrue(down.stderr.contains("authServerUnavailable"), down.stderr)

        let help = try h.agent(["--help"])
        XCTAssertEqual(help.status, 0)
        for line in ["git-credential", "kubectl-credential", "Exit codes", "3 the auth server"] {
            XCTAssertTrue(help.stdout.contains(line), "--help mentions \(line)")
        }
        XCTAssertEqual(try h.agent(["token", "--help"]).status, 0)
    }

    func testMemoryStoreIsRefusedWithAReason() throws {
        let h = try CLIHarness(memoryStore: true)
        let r = try h.agent(["token", "corp"])
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("memory"), r.stderr)
    }

    func testTokenStdin() throws {
        let h = try CLIHarness()
        let r = try h.agent(["login", "pasted", "--token-stdin"], stdin: "pasted-secret-token\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertFalse(r.stdout.contains("pasted-secret-token") || r.stderr.contains("pasted-secret-token"))
        XCTAssertEqual(try h.agent(["token", "pasted"]).stdout, "pasted-secret-token\n")
    }

    /// `h=$(auth-agent header "$URL")` stops a `set -e` script before the request when nothing
    /// covers the URL or nobody is logged in, and lets it through once logged in.
    func testHeaderStopsASetEScript() throws {
        let h = try CLIHarness()
        let script = #"set -e; h=$("$AGENT" header "$URL"); echo "sending with $h" | cut -c1-22"#
        func run(_ url: String) throws -> CLIHarness.Finished {
            try CLIHarness.run("/bin/bash", ["-c", script], environment: h.environment.merging(["AGENT": AgentProcess.binaryURL.path, "URL": url]) { $1 })
        }
        let loggedOut = try run(h.issuer.baseURL + "/api")
        XCTAssertNotEqual(loggedOut.status, 0)
        XCTAssertEqual(loggedOut.stdout, "", "the script stopped")
        try h.login()
        let uncovered = try run("https://elsewhere.example/api")
        XCTAssertNotEqual(uncovered.status, 0)
        XCTAssertEqual(uncovered.stdout, "")
        let covered = try run(h.issuer.baseURL + "/api")
        XCTAssertEqual(covered.status, 0, covered.stderr)
        XCTAssertEqual(covered.stdout, "sending with Authoriza\n")
    }

    /// Issue 19 items 4 and 6: git's and kubectl's helpers give the token `sign` would give for the
    /// URL — the shape its origin is configured with — and kubectl's only to a cluster the provider covers.
    func testHelpersUseTheOriginsShapeAndCoverage() throws {
        let h = try CLIHarness()
        let port = h.issuer.port
        let shaped = "http://localhost:\(port)"
        try h.writeConfig(shapedOrigins: [["origin": .string(shaped), "audience": "api"]])
        try h.login()
        let full = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        let narrow = try h.agent(["token", "corp", "--audience", "api"]).stdout.trimmingCharacters(in: .newlines)
        XCTAssertFalse(full.isEmpty || narrow.isEmpty)
        XCTAssertNotEqual(full, narrow)
        XCTAssertEqual(try h.agent(["header", shaped + "/repo.git"]).stdout, "Authorization: Bearer \(narrow)\n", "sign's rule")

        func gitPassword(_ host: String) throws -> String? {
            let r = try h.agent(["git-credential", "get"], stdin: "protocol=http\nhost=\(host)\n")
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stdout.split(separator: "\n").first { $0.hasPrefix("password=") }.map { String($0.dropFirst(9)) }
        }
        XCTAssertEqual(try gitPassword("localhost:\(port)"), narrow, "the origin's shape, as header gives it")
        XCTAssertEqual(try gitPassword("127.0.0.1:\(port)"), full, "an origin without a shape: the login's token")

        func kubectl(_ info: JSONValue?, provider: String = "corp") throws -> CLIHarness.Finished {
            try h.agent(["kubectl-credential", provider], environment: ["KUBERNETES_EXEC_INFO": info.map { JSONSerializer.string($0) } ?? ""])
        }
        func cluster(_ server: String) -> JSONValue {
            ["kind": "ExecCredential", "apiVersion": "client.authentication.k8s.io/v1",
             "spec": ["interactive": false, "cluster": ["server": .string(server), "certificate-authority-data": "eA=="]]]
        }
        func kubeToken(_ r: CLIHarness.Finished) throws -> String? {
            XCTAssertEqual(r.status, 0, r.stderr)
            return try JSONParser.parse(r.stdout)["status"]?["token"]?.stringValue
        }
        XCTAssertEqual(try kubeToken(try kubectl(cluster(shaped))), narrow)
        XCTAssertEqual(try kubeToken(try kubectl(cluster(h.issuer.baseURL + "/k8s"))), full)
        XCTAssertEqual(try kubeToken(try kubectl(nil)), full, "no cluster info: the provider's token, as before")
        for server in ["https://evil.example:6443", "http://k8s.example", "https://localhost:\(port)", "not a url"] {
            let r = try kubectl(cluster(server))
            XCTAssertEqual(r.status, 1, "\(server): \(r.stderr)")
            XCTAssertEqual(r.stdout, "", server)
            XCTAssertTrue(r.stderr.contains("corp does not cover the cluster"), r.stderr)
        }
        XCTAssertEqual(try kubectl(cluster(shaped), provider: "nosuch").status, 2, "unknown provider")
    }

    /// Issue 19 item 11: a configuration other users could have written is refused before anything
    /// is done with it (exit 2, naming the file and the fix), by every command and the agent alike.
    func testConfigurationOthersCanWriteIsRefused() throws {
        let h = try CLIHarness()
        let path = h.configPath.path
        for mode in [0o664, 0o646, 0o666] {
            XCTAssertEqual(chmod(path, mode_t(mode)), 0)
            let r = try h.agent(["token", "corp"])
            XCTAssertEqual(r.status, 2, "mode \(String(mode, radix: 8)): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(path) && r.stderr.contains("chmod go-w \(path)"), r.stderr)
        }
        let serve = try h.agent([], stdin: "")
        XCTAssertEqual(serve.status, 2, serve.stderr)
        for mode in [0o600, 0o644, 0o444] {
            XCTAssertEqual(chmod(path, mode_t(mode)), 0)
            XCTAssertEqual(try h.agent(["token", "corp"]).status, 1, "mode \(String(mode, radix: 8)) is fine: only 'not logged in'")
        }
        guard geteuid() == 0 else { return }  // only root can give a file away
        XCTAssertEqual(chown(path, 4242, 4242), 0)
        let theirs = try h.agent(["token", "corp"])
        XCTAssertEqual(theirs.status, 2, theirs.stderr)
        XCTAssertTrue(theirs.stderr.contains(path) && theirs.stderr.contains("belongs to another user"), theirs.stderr)
    }

    func testGitCredentialProtocol() throws {
        let h = try CLIHarness()
        let port = h.issuer.port
        let request = "protocol=http\nhost=127.0.0.1:\(port)\npath=repo.git\n"
        let loggedOut = try h.agent(["git-credential", "get"], stdin: request)
        XCTAssertEqual(loggedOut.status, 0)
        XCTAssertEqual(loggedOut.stdout, "", "nothing, so git asks its other helpers")
        XCTAssertTrue(loggedOut.stderr.contains("auth-agent login corp"), loggedOut.stderr)

        try h.login()
        let token = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        let get = try h.agent(["git-credential", "get"], stdin: request)
        XCTAssertEqual(get.status, 0)
        let lines = get.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.prefix(2), ["username=oauth2", "password=\(token)"])
        XCTAssertTrue(lines.last?.hasPrefix("password_expiry_utc=") ?? false, get.stdout)
        XCTAssertEqual(try h.agent(["git-credential", "get"], stdin: "protocol=https\nhost=other.example\n").stdout, "")
        XCTAssertEqual(try h.agent(["git-credential", "get"], stdin: "protocol=http\nhost=example.com\n").stdout, "", "plain http off loopback")
        // Fields that would move the origin built from them get nothing (issue 19 item 13).
        for fields in ["protocol=http\nhost=127.0.0.1:\(port)#@evil.example", "protocol=http\nhost=evil.example@127.0.0.1:\(port)",
                       "protocol=http://127.0.0.1:\(port)/?\nhost=evil.example"] {
            let r = try h.agent(["git-credential", "get"], stdin: fields + "\n")
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(r.stdout, "", fields)
        }
        XCTAssertEqual(try h.agent(["git-credential", "store"], stdin: request + "username=oauth2\npassword=\(token)\n").stdout, "")

        // erase with a token that is not the current one changes nothing; with the current one it refreshes.
        h.issuer.resetCounts()
        XCTAssertEqual(try h.agent(["git-credential", "erase"], stdin: request + "password=stale\n").status, 0)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 0)
        XCTAssertEqual(try h.agent(["git-credential", "erase"], stdin: request + "password=\(token)\n").status, 0)
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1)
        XCTAssertNotEqual(try h.agent(["token", "corp"]).stdout, token + "\n")

        // A provider's gitUsername replaces oauth2.
        XCTAssertEqual(try h.agent(["login", "pasted-git", "--token-stdin"], stdin: "pat\n").status, 0)
        XCTAssertEqual(try h.agent(["git-credential", "get"], stdin: "protocol=https\nhost=git.pasted.example\n").stdout, "username=x-access-token\npassword=pat\n")
    }
}
