import DevIssuer
import Foundation
import JSON
import JSONRPC
import Locking
import XCTest

/// The credential helpers driven by the real tools: Debian's git against a loopback
/// `git http-backend`, kubectl against a loopback https API server. Both servers accept only
/// tokens the dev issuer accepts.
final class RealToolTests: XCTestCase {
    private static func which(_ tool: String) -> String? { CLIHarness.which(tool) }

    override func setUpWithError() throws { try CLIHarness.requirePython() }

    private func git(_ h: CLIHarness, _ arguments: [String], in directory: URL? = nil) throws -> CLIHarness.Finished {
        let helper = "!\(AgentProcess.binaryURL.path) git-credential"
        let env = h.environment.merging(["GIT_CONFIG_NOSYSTEM": "1", "HOME": h.directory.path, "GIT_ASKPASS": "", "SSH_ASKPASS": ""]) { $1 }
        return try CLIHarness.run(try XCTUnwrap(Self.which("git")), ["-c", "credential.helper=", "-c", "credential.helper=\(helper)"] + arguments,
                                  environment: env, directory: directory ?? h.directory, timeout: 60)
    }

    /// `repos/repo.git`: a bare repository with one commit, for `git http-backend` to serve; returns `repos`.
    private func bareRepository(_ h: CLIHarness) throws -> URL {
        let root = h.directory.appendingPathComponent("repos")
        let work = h.directory.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        for args in [["init", "-q", "-b", "main", work.path], ["-C", work.path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"],
                     ["clone", "-q", "--bare", work.path, root.appendingPathComponent("repo.git").path]] {
            let r = try git(h, args)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        return root
    }

    /// Issue 31 item 5: the dev issuer's own `/git/demo.git` — what the README's git section is tried
    /// on — clones and takes a push through the credential helper, and refuses git without a token.
    func testTheDevIssuersRepositoryClonesAndTakesAPush() throws {
        guard Self.which("git") != nil else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        let h = try CLIHarness()
        let url = h.issuer.baseURL + "/git/demo.git"
        let refused = try git(h, ["clone", "-q", url, "refused"])
        XCTAssertNotEqual(refused.status, 0, "logged out: the clone fails")
        XCTAssertTrue(refused.stderr.contains("auth-agent login corp"), refused.stderr)

        try h.login()
        XCTAssertEqual(try git(h, ["clone", "-q", url, "demo"]).status, 0)
        let checkout = h.directory.appendingPathComponent("demo")
        XCTAssertEqual(try String(contentsOf: checkout.appendingPathComponent("README.md"), encoding: .utf8).hasPrefix("# demo"), true)
        try Data("pushed\n".utf8).write(to: checkout.appendingPathComponent("notes.txt"))
        for args in [["add", "notes.txt"], ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "a note"], ["push", "-q", "origin", "main"]] {
            let r = try git(h, args, in: checkout)
            XCTAssertEqual(r.status, 0, "\(args): \(r.stderr)")
        }
        let again = try git(h, ["clone", "-q", url, "again"])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertEqual(try git(h, ["log", "--format=%s"], in: h.directory.appendingPathComponent("again")).stdout,
                       "a note\nA repository to try auth-agent git-credential on\n", "the push reached the repository")
        // Without the helper (and no prompt), git has no token to give: refused, nothing read.
        let env = h.environment.merging(["GIT_CONFIG_NOSYSTEM": "1", "HOME": h.directory.path, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": ""]) { $1 }
        let bare = try CLIHarness.run(try XCTUnwrap(Self.which("git")), ["-c", "credential.helper=", "ls-remote", url], environment: env,
                                      directory: h.directory, timeout: 60)
        XCTAssertNotEqual(bare.status, 0, bare.stdout)
    }

    func testGitCloneAndFetchThroughTheCredentialHelper() throws {
        guard Self.which("git") != nil else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        let h = try CLIHarness()
        let root = try bareRepository(h)
        let server = try ScriptServer("git_server.py", [root.path, h.issuer.baseURL])
        let origin = "http://127.0.0.1:\(server.port)"
        try h.writeConfig(extraOrigins: [origin])
        let url = origin + "/repo.git"

        let refused = try git(h, ["clone", "-q", url, "refused"])
        XCTAssertNotEqual(refused.status, 0, "logged out: the clone fails")
        XCTAssertTrue(refused.stderr.contains("auth-agent login corp"), refused.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.directory.appendingPathComponent("refused").path))

        try h.login()
        let clone = try git(h, ["clone", "-q", url, "clone"])
        XCTAssertEqual(clone.status, 0, clone.stderr)
        let checkout = h.directory.appendingPathComponent("clone")
        XCTAssertEqual(try git(h, ["log", "--format=%s"], in: checkout).stdout, "first\n")

        // The issuer revokes the access token: git's 401 → erase → refresh; the next command works.
        let token = try h.agent(["token", "corp"]).stdout.trimmingCharacters(in: .newlines)
        try revoke(token, at: h.issuer.baseURL)
        h.issuer.resetCounts()
        let rejected = try git(h, ["fetch", "-q"], in: checkout)
        XCTAssertNotEqual(rejected.status, 0, "the revoked token is refused")
        XCTAssertEqual(h.issuer.count("token.refresh_token"), 1, "erase refreshed")
        let fetch = try git(h, ["fetch", "-q"], in: checkout)
        XCTAssertEqual(fetch.status, 0, fetch.stderr)
        for output in [clone, rejected, fetch] { XCTAssertFalse(output.stderr.contains(token)) }
    }

    /// Issue 19 item 4: an origin configured with a token shape gets that shape through git too.
    func testGitGetsTheTokenShapeOfItsOrigin() throws {
        guard Self.which("git") != nil else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        let h = try CLIHarness()
        let root = try bareRepository(h)
        let server = try ScriptServer("git_server.py", [root.path, h.issuer.baseURL])
        let origin = "http://localhost:\(server.port)"
        try h.writeConfig(shapedOrigins: [["origin": .string(origin), "audience": "api"]])
        try h.login()
        h.issuer.resetCounts()
        let r = try git(h, ["ls-remote", origin + "/repo.git"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(h.issuer.grantCounts["refresh_token:alice:audience=api"], 1, "\(h.issuer.grantCounts)")
    }

    /// Issue 15: git's username (`https://bob@host/…`) picks the account it names; a username
    /// that names no account (`oauth2`, a typo) gets the default account, as no username does.
    func testGitUsesTheAccountItsURLNames() throws {
        guard Self.which("git") != nil else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        let h = try CLIHarness()
        let root = try bareRepository(h)
        let server = try ScriptServer("git_server.py", [root.path, h.issuer.baseURL])
        let origin = "127.0.0.1:\(server.port)"
        try h.writeConfig(extraOrigins: ["http://" + origin])
        try h.login()
        try h.login(as: ("bob", "builder"))
        let log = root.appendingPathComponent("users.log")
        for (prefix, user) in [("bob@", "bob"), ("", "alice"), ("oauth2@", "alice"), ("alice@", "alice")] {
            try? FileManager.default.removeItem(at: log)
            let r = try git(h, ["ls-remote", "http://\(prefix)\(origin)/repo.git"])
            XCTAssertEqual(r.status, 0, r.stderr)
            let users = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map(String.init)
            XCTAssertFalse(users.isEmpty)
            XCTAssertEqual(Set(users), [user], "\(prefix.isEmpty ? "no username" : prefix) → \(user)'s token")
        }
    }

    /// A loopback https API server (kube_server.py) and a kubeconfig using `kubectl-credential corp`
    /// for it; `version()` runs `kubectl get --raw /version`. The server lives as long as the returned value.
    private func kubeCluster(_ h: CLIHarness, provideClusterInfo: Bool = false) throws -> (server: ScriptServer, version: @Sendable () throws -> CLIHarness.Finished) {
        guard let kubectl = Self.which("kubectl") else { throw XCTSkip("kubectl is not installed here; the exec-plugin test needs it") }
        guard let openssl = Self.which("openssl") else { throw XCTSkip("openssl is not installed (.ci/run installs it)") }
        let cert = h.directory.appendingPathComponent("server.crt"), key = h.directory.appendingPathComponent("server.key")
        let made = try CLIHarness.run(openssl, ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1",
                                                "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                                                "-keyout", key.path, "-out", cert.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let server = try ScriptServer("kube_server.py", [cert.path, key.path, h.issuer.baseURL])
        let kubeconfig = h.directory.appendingPathComponent("kubeconfig")
        let config: JSONValue = [
            "apiVersion": "v1", "kind": "Config", "current-context": "test",
            "clusters": [["name": "test", "cluster": ["server": .string("https://127.0.0.1:\(server.port)"),
                                                      "certificate-authority-data": .string(try Data(contentsOf: cert).base64EncodedString())]]],
            "users": [["name": "alice", "user": ["exec": ["apiVersion": "client.authentication.k8s.io/v1", "command": .string(AgentProcess.binaryURL.path),
                                                          "args": ["kubectl-credential", "corp"], "interactiveMode": "Never",
                                                          "provideClusterInfo": .bool(provideClusterInfo)]]]],
            "contexts": [["name": "test", "context": ["cluster": "test", "user": "alice"]]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: kubeconfig)
        let env = h.environment.merging(["HOME": h.directory.path, "KUBECONFIG": kubeconfig.path]) { $1 }
        return (server, { try CLIHarness.run(kubectl, ["get", "--raw", "/version"], environment: env, timeout: 60) })
    }

    /// Issue 19 item 6: with `provideClusterInfo: true` kubectl names the cluster, and the token goes
    /// only to one the provider covers — in the shape configured for it.
    func testKubectlGetsATokenOnlyForAClusterTheProviderCovers() throws {
        let h = try CLIHarness()
        let (server, version) = try kubeCluster(h, provideClusterInfo: true)
        defer { withExtendedLifetime(server) {} }
        try h.login()
        let uncovered = try version()
        XCTAssertNotEqual(uncovered.status, 0)
        XCTAssertTrue(uncovered.stderr.contains("corp does not cover the cluster https://127.0.0.1:\(server.port)"), uncovered.stderr)
        try h.writeConfig(shapedOrigins: [["origin": .string("https://127.0.0.1:\(server.port)"), "audience": "api"]])
        h.issuer.resetCounts()
        let covered = try version()
        XCTAssertEqual(covered.status, 0, covered.stderr)
        XCTAssertTrue(covered.stdout.contains("v1.32.0-fake"), covered.stdout)
        XCTAssertEqual(h.issuer.grantCounts["refresh_token:alice:audience=api"], 1, "the origin's shape: \(h.issuer.grantCounts)")
    }

    /// kubectl runs the exec plugin once per command; 8 at once on an expired token must refresh it once.
    func testParallelKubectlOnAnExpiredTokenRefreshOnce() throws {
        let h = try CLIHarness(refreshWindowSeconds: 1)
        let (server, version) = try kubeCluster(h)
        defer { withExtendedLifetime(server) {} }

        let loggedOut = try version()
        XCTAssertNotEqual(loggedOut.status, 0)
        XCTAssertTrue(loggedOut.stderr.contains("auth-agent login corp"), loggedOut.stderr)

        h.issuer.setAccessTokenLifetime(2)
        try h.login()
        // The login's process received the token before it ended: it has expired 2 s from here.
        let expired = Date().addingTimeInterval(2.2)
        XCTAssertEqual(try version().status, 0)
        h.issuer.setAccessTokenLifetime(300)
        Thread.sleep(until: expired)  // the stored token has expired
        h.issuer.resetCounts()
        let results = Locked<[CLIHarness.Finished]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let r = try? version() { results.withLock { $0.append(r) } }
        }
        let all = results.current
        XCTAssertEqual(all.count, 8)
        for r in all {
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("v1.32.0-fake"), r.stdout)
        }
        let refreshes = h.issuer.count("token.refresh_token")
        print("parallel kubectl: \(all.filter { $0.status == 0 }.count)/8 succeeded, \(refreshes) refresh at the issuer")
        XCTAssertEqual(refreshes, 1, "one refresh for 8 parallel kubectl")
    }

    /// RFC 7009 revocation of one access token at the dev issuer (the refresh token stays valid).
    private func revoke(_ token: String, at base: String) throws {
        let r = try CLIHarness.run("/usr/bin/env", ["curl", "-sf", "-o", "/dev/null", "-d", "client_id=cli", "--data-urlencode", "token@-", base + "/revoke"], stdin: token)
        XCTAssertEqual(r.status, 0, r.stderr)
    }
}
