import AuthCore
import Foundation
import JSON
import XCTest
@testable import auth_agent

/// The pure parts of the one-shot subcommands: command line, helper protocols, exit codes.
final class ToolParsingTests: XCTestCase {
    func testCommandLine() throws {
        XCTAssertEqual(try ToolCommand.parse(["token", "corp", "--json"]).action, .token(provider: "corp", json: true))
        XCTAssertEqual(try ToolCommand.parse(["login", "corp", "--username=alice", "--password-stdin"]).action,
                       .login(provider: "corp", username: "alice", passwordStdin: true, tokenStdin: false, flow: nil))
        XCTAssertEqual(try ToolCommand.parse(["login", "d", "--device"]).action,
                       .login(provider: "d", username: nil, passwordStdin: false, tokenStdin: false, flow: .device))
        let configured = try ToolCommand.parse(["header", "https://x/y", "--config", "/c.json", "--log-level", "debug"])
        XCTAssertEqual(configured.action, .header(url: "https://x/y"))
        XCTAssertEqual(try ToolCommand.parse(["header", "--json", "-X", "PUT", "https://x/y"]).action, .header(url: "https://x/y", method: "PUT", json: true))
        XCTAssertEqual(configured.configPath, "/c.json")
        XCTAssertEqual(try ToolCommand.parse(["git-credential", "get"]).action, .gitCredential(operation: "get"))
        XCTAssertEqual(try ToolCommand.parse(["kubectl-credential", "k"]).action, .kubectlCredential(provider: "k"))
        XCTAssertTrue(try ToolCommand.parse(["status", "--help"]).help)
        for bad in [["token"], ["token", "a", "b"], ["status", "x"], ["header", "--all", "u"], ["login", "p", "--password-stdin", "--token-stdin"],
                    ["login", "p", "--device", "--browser"], ["logout", "p", "--username", "u"], ["token", "p", "--log-level", "loud"]] {
            XCTAssertThrowsError(try ToolCommand.parse(bad), "\(bad)")
        }
        XCTAssertEqual(try Arguments.parse(["status"]).command, .tool(try ToolCommand.parse(["status"])))
    }

    /// `auth-agent fetch -H` refuses what the RPC's `fetch` refuses, with exit 2: fields that frame
    /// or route the request (a `Host` on a signed request could send the token to another tenant),
    /// names that are not tokens, values with CR/LF. Before, all of these were sent as given.
    func testFetchHeadersAreCheckedAsTheRPCChecksThem() throws {
        func request(_ headers: [String]) throws(ToolFailure) -> FetchRequest {
            try FetchCommand.request(ToolCommand.FetchOptions(headers: headers, url: "https://api.example.com/x"))
        }
        for bad in ["Host: evil.example", "host: evil.example", "Content-Length: 0", "Transfer-Encoding: chunked", "Connection: close",
                    "TE: trailers", "Upgrade: h2c", "Proxy-Authorization: Basic x", "X Y: 1", "X(: 1", "X-A: a\rb", "X-A: a\nB: c", ": v"] {
            XCTAssertThrowsError(try request([bad]), bad) { XCTAssertEqual(($0 as? ToolFailure)?.code, .usage, bad) }
        }
        XCTAssertEqual(try request(["Accept: text/plain", "X-Trace-Id: 1"]).headers.map { "\($0.0)=\($0.1)" },
                       ["Accept=text/plain", "X-Trace-Id=1"])
    }

    /// `-X` is checked as the RPC's `fetch` checks `request.method`: exit 2 with a message. Before,
    /// `fetch -X 'G ET'` failed at the transport (exit 1, "not a valid http or https request") and
    /// `header -X ''` printed a DPoP proof for an empty method.
    func testMethodIsCheckedAsTheRPCChecksIt() throws {
        for command in ["fetch", "header"] {
            for bad in ["", "G ET", "GET\r\nX: y", "GET:", "G\u{7F}"] {
                XCTAssertThrowsError(try ToolCommand.parse([command, "-X", bad, "https://api.example.com/x"]), "\(command) \(bad)") {
                    XCTAssertTrue("\($0)".contains("-X must be an HTTP method"), "\($0)")
                }
            }
            XCTAssertNoThrow(try ToolCommand.parse([command, "--request=PATCH", "https://api.example.com/x"]))
        }
    }

    func testExitCodesFollowTheErrorNumber() {
        XCTAssertEqual(ToolFailure(AuthError(.authServerUnavailable, "down")).code, .unavailable)
        XCTAssertEqual(ToolFailure(AuthError(.unknownProvider, "no")).code, .usage)
        for code in [AuthErrorCode.notLoggedIn, .sessionExpired, .invalidCredentials, .loginDenied, .excessiveRefresh] {
            XCTAssertEqual(ToolFailure(AuthError(code, "x")).code, .failed, "\(code)")
        }
        if let storeUnavailable = AuthErrorCode(rawValue: 1010) {
            XCTAssertEqual(ToolFailure(AuthError(storeUnavailable, "x")).code, .unavailable)
        }
        let failure = ToolFailure(AuthError(.sessionExpired, "Log in again."))
        XCTAssertEqual(failure.message, "sessionExpired: Log in again.")
        XCTAssertTrue(failure.needsLogin)
    }

    func testGitCredentialRequestAndAnswer() {
        let request = GitCredential.parse(["protocol=https", "host=git.example:8443", "path=a/b.git", "junk", "password=p=q"])
        XCTAssertEqual(request["host"], "git.example:8443")
        XCTAssertEqual(request["password"], "p=q", "only the first = splits")
        XCTAssertEqual(GitCredential.origin(request)?.description, "https://git.example:8443")
        XCTAssertNil(GitCredential.origin(["protocol": "http", "host": "git.example"]), "a token never goes over plain http off loopback")
        XCTAssertEqual(GitCredential.origin(["protocol": "http", "host": "127.0.0.1:8080"])?.description, "http://127.0.0.1:8080")
        XCTAssertNil(GitCredential.origin(["protocol": "https"]))
        XCTAssertEqual(GitCredential.answer(username: "oauth2", token: "t", expiresAt: Date(timeIntervalSince1970: 1_800_000_000)),
                       "username=oauth2\npassword=t\npassword_expiry_utc=1800000000\n")
        XCTAssertEqual(GitCredential.answer(username: "x-token", token: "t", expiresAt: nil), "username=x-token\npassword=t\n")
        XCTAssertNil(GitCredential.answer(username: "oauth2", token: "t\nhost=evil.example", expiresAt: nil), "no smuggled keys")
    }

    /// Issue 19 item 13: the origin is built from `protocol` and `host`, so each must be only what
    /// git puts there; anything that would move the origin elsewhere gets no credential.
    func testGitCredentialFieldsCannotShiftTheOrigin() {
        for (scheme, host) in [("https", "git.example.com#@evil.example"), ("https", "git.example.com/@evil.example"),
                               ("https", "git.example.com?@evil.example"), ("https", "evil.example@git.example.com"),
                               ("https://git.example.com/?", "evil.example"), ("https://git.example.com#", "evil.example"),
                               ("https", "git.example.com:443@evil.example"), ("https", "git.example.com:"), ("https", "git.example.com:0x1bb"),
                               ("https", "a:b:443"), ("https", "git.example.com "), ("https", "[::1"), ("https", "[::1]x"), ("https", "[v1.x]"),
                               ("https", ""), ("", "git.example.com"), ("1https", "git.example.com"), ("ht tps", "git.example.com")] {
            XCTAssertNil(GitCredential.origin(["protocol": scheme, "host": host]), "protocol=\(scheme) host=\(host)")
        }
        XCTAssertEqual(GitCredential.origin(["protocol": "HTTPS", "host": "Git.Example.com:8443"])?.description, "https://git.example.com:8443")
        XCTAssertEqual(GitCredential.origin(["protocol": "http", "host": "[::1]:8080"])?.description, "http://[::1]:8080")
        XCTAssertEqual(GitCredential.origin(["protocol": "https", "host": "[2001:db8::1]"])?.description, "https://[2001:db8::1]")
        XCTAssertEqual(GitCredential.origin(["protocol": "https", "host": "my_host.example"])?.description, "https://my_host.example")
    }

    /// The command line's `--scope`, `--audience` and `--resource` are checked as the protocol's params are (exit 2).
    func testShapeFlagsAreCheckedLikeTheProtocol() throws {
        func shape(_ argv: [String]) throws -> TokenShape? { try Tool.shape(of: try ToolCommand.parse(argv)) }
        XCTAssertNil(try shape(["token", "p"]))
        XCTAssertEqual(try shape(["token", "p", "--scope", "b", "--scope=a", "--audience", "api", "--resource", "https://api.example/"]),
                       TokenShape(scopes: ["a", "b"], audience: "api", resource: "https://api.example/"))
        for (argv, flag) in [(["token", "p", "--scope", "a b"], "--scope"), (["header", "u", "--scope", ""], "--scope"),
                             (["fetch", "u", "--scope", "caf\u{E9}"], "--scope"), (["token", "p", "--scope", "a\u{1B}"], "--scope"),
                             (["token", "p", "--audience", ""], "--audience"), (["token", "p", "--resource", "relative/path"], "--resource"),
                             (["token", "p", "--resource", "https://api.example/#frag"], "--resource")] {
            XCTAssertThrowsError(try shape(argv), "\(argv)") { error in
                let failure = error as? ToolFailure
                XCTAssertEqual(failure?.code, .usage, "\(argv)")
                XCTAssertTrue(failure?.message.hasPrefix(flag) ?? false, failure?.message ?? "")
            }
        }
    }

    func testKubectlExecInfoAndCredential() throws {
        let v1beta1 = try KubectlCredential.execInfo(#"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":true}}"#, stdinIsTerminal: false)
        XCTAssertEqual(v1beta1, .init(apiVersion: "client.authentication.k8s.io/v1beta1", interactive: true))
        let v1 = try KubectlCredential.execInfo(#"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}}"#, stdinIsTerminal: true)
        XCTAssertEqual(v1, .init(apiVersion: "client.authentication.k8s.io/v1", interactive: false))
        XCTAssertEqual(try KubectlCredential.execInfo(nil, stdinIsTerminal: true), .init(apiVersion: "client.authentication.k8s.io/v1", interactive: true))
        XCTAssertThrowsError(try KubectlCredential.execInfo(#"{"apiVersion":"client.authentication.k8s.io/v2"}"#, stdinIsTerminal: false))
        XCTAssertThrowsError(try KubectlCredential.execInfo("{", stdinIsTerminal: false))
        XCTAssertNil(v1.server, "no cluster info unless the kubeconfig sets provideClusterInfo")
        let withCluster = try KubectlCredential.execInfo(#"{"apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false,"cluster":{"server":"https://k8s.example:6443","certificate-authority-data":"eA=="}}}"#, stdinIsTerminal: false)
        XCTAssertEqual(withCluster.server, "https://k8s.example:6443")
        let out = try JSONParser.parse(KubectlCredential.execCredential(apiVersion: "client.authentication.k8s.io/v1", token: "t", expiresAt: "2030-01-01T00:00:00Z"))
        XCTAssertEqual(out, ["apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                             "status": ["token": "t", "expirationTimestamp": "2030-01-01T00:00:00Z"]])
    }

    func testStatusTableAndPrompts() {
        let alice: JSONValue = ["sub": "a1", "preferred_username": "alice"]
        let status: JSONValue = ["providers": [
            ["id": "corp", "state": "loggedIn", "user": alice, "expiresAt": "2030-01-01T00:00:00Z", "account": "a1", "accounts": [
                ["id": "a1", "user": alice, "expiresAt": "2030-01-01T00:00:00Z", "default": true],
                ["id": "b2", "user": ["sub": "b2", "name": "Bob"], "expiresAt": .null, "default": false],
            ]],
            ["id": "gh", "state": "loggedOut", "accounts": []],
        ]]
        // One row per account, the default marked; a provider without accounts has one row.
        XCTAssertEqual(StatusTable.render(status, store: "file"), """
            PROVIDER  ACCOUNT  STATE      USER   EXPIRES               STORE
            corp      a1 *     loggedIn   alice  2030-01-01T00:00:00Z  file
            corp      b2       loggedIn   Bob    never                 file
            gh        -        loggedOut  -      -                     file

            """)
        let device = TerminalLogin.promptText(.deviceCode(userCode: "ABCD-EFGH", verificationURI: "https://x/device", verificationURIComplete: nil, expiresAt: Date()), displayName: "X")
        XCTAssertTrue(device.contains("open https://x/device and enter the code ABCD-EFGH"), device)
        XCTAssertTrue(TerminalLogin.promptText(.browser(url: "https://x/authorize?a=b", expiresAt: Date()), displayName: "X").contains("https://x/authorize?a=b"))
    }

    /// Issue 19 item 12: a server's text reaches the terminal with its control characters escaped —
    /// a newline in `sub` adds no row, OSC/CSI sequences (7-bit and the C1 CSI U+009B) and bidi overrides do nothing.
    func testServerTextIsEscapedOnTheTerminal() {
        XCTAssertEqual(TerminalText.escaped("alice"), "alice")
        XCTAssertEqual(TerminalText.escaped("é ü 日本"), "é ü 日本", "printable text is kept")
        XCTAssertEqual(TerminalText.escaped("a\u{1B}]0;owned\u{07}b\nc\td\u{7F}\u{9B}2J\u{202E}x"),
                       "a\\x1B]0;owned\\x07b\\x0Ac\\x09d\\x7F\\u{9B}2J\\u{202E}x")
        let status: JSONValue = ["providers": [
            ["id": "corp", "state": "loggedIn", "accounts": [
                ["id": "e\nvil", "user": ["sub": "e\nvil", "name": "\u{1B}[2J\u{1B}]0;title\u{07}Mallory\ncorp      forged   loggedIn"],
                 "expiresAt": "2030-01-01T00:00:00Z", "default": true],
            ]],
        ]]
        let table = StatusTable.render(status, store: "file")
        XCTAssertEqual(table.split(separator: "\n").count, 2, table)
        XCTAssertFalse(table.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 }, table)
        let device = TerminalLogin.promptText(.deviceCode(userCode: "AB\u{1B}]8;;https://evil\u{07}CD", verificationURI: "https://x/device\u{9B}1A",
                                                          verificationURIComplete: "https://x/d?c=1\n\u{202E}", expiresAt: Date()), displayName: "X")
        XCTAssertEqual(device.split(separator: "\n").count, 3, device)
        XCTAssertFalse(device.unicodeScalars.contains { TerminalText.isControl($0) && $0 != "\n" }, device)
        XCTAssertTrue(device.contains("enter the code AB\\x1B]8;;https://evil\\x07CD"), device)
    }
}
