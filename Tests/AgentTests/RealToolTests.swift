import DevIssuer
import Foundation
import JSON
import XCTest

/// The credential helpers driven by the real tools: Debian's git against a loopback
/// `git http-backend`, kubectl against a loopback https API server. Both servers accept only
/// tokens the dev issuer accepts.
final class RealToolTests: XCTestCase {
    private static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    private func git(_ h: CLIHarness, _ arguments: [String], in directory: URL? = nil) throws -> CLIHarness.Finished {
        let helper = "!\(AgentProcess.binaryURL.path) git-credential"
        let env = h.environment.merging(["GIT_CONFIG_NOSYSTEM": "1", "HOME": h.directory.path, "GIT_ASKPASS": "", "SSH_ASKPASS": ""]) { $1 }
        return try CLIHarness.run(try XCTUnwrap(Self.which("git")), ["-c", "credential.helper=", "-c", "credential.helper=\(helper)"] + arguments,
                                  environment: env, directory: directory ?? h.directory, timeout: 60)
    }

    func testGitCloneAndFetchThroughTheCredentialHelper() throws {
        guard Self.which("git") != nil else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        let h = try CLIHarness()
        // A bare repository with one commit, served by `git http-backend`.
        let root = h.directory.appendingPathComponent("repos")
        let work = h.directory.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        for args in [["init", "-q", "-b", "main", work.path], ["-C", work.path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"],
                     ["clone", "-q", "--bare", work.path, root.appendingPathComponent("repo.git").path]] {
            let r = try git(h, args)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
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

    /// RFC 7009 revocation of one access token at the dev issuer (the refresh token stays valid).
    private func revoke(_ token: String, at base: String) throws {
        let r = try CLIHarness.run("/usr/bin/env", ["curl", "-sf", "-o", "/dev/null", "-d", "client_id=cli", "--data-urlencode", "token@-", base + "/revoke"], stdin: token)
        XCTAssertEqual(r.status, 0, r.stderr)
    }
}
