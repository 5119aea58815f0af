import Foundation
import JSON
import XCTest

/// Issue 30: every command-line command gives the same answer in-process and through a socket
/// agent — the same stdout, stderr and exit code — on the same configuration and store, for
/// every outcome a script or a person sees (a token, a header, a refusal, nobody logged in…).
final class OneDoorCommandLineTests: XCTestCase {
    struct Case {
        let arguments: [String]
        var stdin = ""
        var environment: [String: String] = [:]
    }

    func testEveryCommandAnswersAlikeInProcessAndThroughTheSocket() throws {
        let h = try CLIHarness()
        let url = h.issuer.baseURL + "/api/me"
        try h.login()
        let pasted = try h.agent(["login", "pasted-git", "--token-stdin"], stdin: "git-token\n")
        XCTAssertEqual(pasted.status, 0, pasted.stderr)
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
        let kube = ["KUBERNETES_EXEC_INFO": #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#]
        let cases: [Case] = [
            Case(arguments: ["status", "--json"]), Case(arguments: ["status"]),
            Case(arguments: ["token", "corp"]), Case(arguments: ["token", "corp", "--json"]), Case(arguments: ["token", "corp", "--min-valid", "5"]),
            Case(arguments: ["token", "device"]), Case(arguments: ["token", "nope"]), Case(arguments: ["token", "corp", "--account", "bob"]),
            Case(arguments: ["header", url]), Case(arguments: ["header", "-X", "POST", url]), Case(arguments: ["header", "https://elsewhere.example/"]),
            Case(arguments: ["fetch", url]), Case(arguments: ["fetch", "-i", h.issuer.baseURL + "/api/nothing-here"]),
            Case(arguments: ["git-credential", "get"], stdin: "protocol=https\nhost=git.pasted.example\n\n"),
            Case(arguments: ["git-credential", "get"], stdin: "protocol=https\nhost=elsewhere.example\n\n"),
            Case(arguments: ["git-credential", "get"], stdin: "protocol=https\nhost=device.example\n\n"),
            Case(arguments: ["kubectl-credential", "corp"], environment: kube), Case(arguments: ["kubectl-credential", "device"], environment: kube),
            Case(arguments: ["refresh", "pasted-git"]), Case(arguments: ["refresh", "device"]),
            Case(arguments: ["logout", "device"]), Case(arguments: ["logout", "corp", "--account", "bob"]),
            Case(arguments: ["forget", "corp"]), Case(arguments: ["login", "nope"]),
        ]
        for c in cases {
            let here = try h.agent(c.arguments, stdin: c.stdin, environment: c.environment)
            let there = try h.agent(c.arguments, stdin: c.stdin, environment: c.environment.merging(["AUTH_AGENT_SOCK": agent.path]) { $1 })
            XCTAssertEqual(here.status, there.status, "\(c.arguments): exit codes; stderr in-process: \(here.stderr) through the socket: \(there.stderr)")
            XCTAssertEqual(here.stdout, there.stdout, "\(c.arguments): stdout")
            XCTAssertEqual(here.stderr, there.stderr, "\(c.arguments): stderr")
        }
        // `refresh` of a pasted token, through either door, kept the session (it has nothing to
        // refresh with; before, through the socket, it was ended as if the server had refused it).
        let kept = try h.agent(["token", "pasted-git"], environment: ["AUTH_AGENT_SOCK": agent.path])
        XCTAssertEqual(kept.stdout, "git-token\n", kept.stderr)
    }
}
