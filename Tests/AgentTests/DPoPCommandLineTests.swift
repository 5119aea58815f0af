import AuthCore
import DevIssuer
import Foundation
import JSON
import XCTest

/// Issue 24, item 4: the helpers that cannot send a DPoP proof refuse a DPoP provider
/// loudly (exit 1), and `header -X METHOD` prints the proof line beside `Authorization`.
final class DPoPCommandLineTests: XCTestCase {
    private func harness() throws -> CLIHarness {
        let h = try CLIHarness()
        let base = h.issuer.baseURL
        let config: JSONValue = [
            "store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)],
            "providers": [["id": "corp", "displayName": "Corp SSO", "flow": "password", "origins": [.string(base)],
                           "tokenEndpoint": .string(base + "/token"), "clientId": "cli", "dpop": true]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        return h
    }

    /// In-process and through a socket agent alike (issue 29 item 10: through the socket, `token`
    /// printed the bound token and exited 0): the refusal is the core's (`TokenUse.bearer`).
    func testTokenGitAndKubectlHelpersRefuseABoundToken() throws {
        let h = try harness()
        try h.login()
        let agent = try SocketAgentProcess(path: h.directory.appendingPathComponent("run/agent.sock").path, environment: h.environment)
        let kube = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false}}"#
        let kubeWithServer = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{"interactive":false,"#
            + #""cluster":{"server":"\#(h.issuer.baseURL)"}}}"#
        for (arguments, stdin, environment) in [(["token", "corp"], "", [:]), (["token", "corp", "--json"], "", [:]),
                                                (["git-credential", "get"], "protocol=http\nhost=127.0.0.1:\(h.issuer.port)\n", [:]),
                                                (["kubectl-credential", "corp"], "", ["KUBERNETES_EXEC_INFO": kube]),
                                                (["kubectl-credential", "corp"], "", ["KUBERNETES_EXEC_INFO": kubeWithServer])] {
            var answers: [CLIHarness.Finished] = []
            for (door, extra) in [("in-process", [String: String]()), ("socket", ["AUTH_AGENT_SOCK": agent.path])] {
                let r = try h.agent(arguments, stdin: stdin, environment: environment.merging(extra) { $1 })
                XCTAssertEqual(r.status, 1, "\(door) \(arguments): \(r.stderr)")
                XCTAssertEqual(r.stdout, "", "\(door) \(arguments): no token handed out")
                XCTAssertTrue(r.stderr.contains("corp uses DPoP"), "\(door): \(r.stderr)")
                answers.append(r)
            }
            // One door: the same words and code whichever agent answered (issue 30).
            XCTAssertEqual(answers[0].stderr, answers[1].stderr, "\(arguments)")
        }
    }

    func testHeaderPrintsTheProofForTheMethod() async throws {
        let h = try harness()
        try h.login()
        let url = h.issuer.baseURL + "/api/echo?x=1"
        let r = try h.agent(["header", "-X", "POST", url])
        XCTAssertEqual(r.status, 0, r.stderr)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, r.stdout)
        XCTAssertTrue(lines[0].hasPrefix("Authorization: DPoP "), lines[0])
        XCTAssertTrue(lines[1].hasPrefix("DPoP: "), lines[1])
        // The dev issuer accepts what header printed, for the method it was made for.
        let headers = lines.map { line -> (String, String) in
            let colon = line.firstIndex(of: ":")!
            return (String(line[..<colon]), String(line[line.index(colon, offsetBy: 2)...]))
        }
        let response = try await SystemHTTPTransport().send(HTTPRequest(method: "POST", url: url, headers: headers))
        XCTAssertEqual(response.status, 200)
    }

    /// Issue 34 item 3: `header --json` prints the one object an MCP host's `headersHelper` reads —
    /// `Authorization`, and `DPoP` for a DPoP provider — which the server accepts as is.
    func testHeaderJSONForABearerAndADPoPProvider() async throws {
        let bearer = try CLIHarness()
        try bearer.login()
        let me = bearer.issuer.baseURL + "/api/me"
        let plain = try bearer.agent(["header", "--json", me])
        XCTAssertEqual(plain.status, 0, plain.stderr)
        let bearerHeaders = try XCTUnwrap(try JSONParser.parse(plain.stdout).objectValue, plain.stdout)
        XCTAssertEqual(bearerHeaders.keys, ["Authorization"])
        XCTAssertTrue(bearerHeaders["Authorization"]?.stringValue?.hasPrefix("Bearer ") == true, plain.stdout)
        let meResponse = try await SystemHTTPTransport().send(HTTPRequest(method: "GET", url: me, headers: [("Authorization", bearerHeaders["Authorization"]!.stringValue!)]))
        XCTAssertEqual(meResponse.status, 200)

        let h = try harness()
        try h.login()
        let url = h.issuer.baseURL + "/api/echo?x=1"
        let r = try h.agent(["header", "--json", "-X", "POST", url])
        XCTAssertEqual(r.status, 0, r.stderr)
        let headers = try XCTUnwrap(try JSONParser.parse(r.stdout).objectValue, r.stdout)
        XCTAssertEqual(Set(headers.keys), ["Authorization", "DPoP"])
        XCTAssertTrue(headers["Authorization"]?.stringValue?.hasPrefix("DPoP ") == true, r.stdout)
        let response = try await SystemHTTPTransport().send(HTTPRequest(method: "POST", url: url, headers: headers.members.map { ($0, $1.stringValue ?? "") }))
        XCTAssertEqual(response.status, 200, "the proof was made for POST and this URL")
    }
}

/// The agent process with a DPoP provider: signs under load, then exits cleanly while
/// nonces are being precomputed in the background (libcrypto must not be torn down
/// under a thread still using it), and never shows the private key.
final class DPoPProcessTests: XCTestCase {
    func testManySignsThenAnExitAndTheKeyStaysInTheStore() throws {
        let h = try AgentHarness()
        let base = h.issuer.baseURL
        let config: JSONValue = [
            "store": ["kind": "file", "path": .string(h.storeDirectory.path)],
            "providers": [["id": "corp", "flow": "password", "origins": [.string(base)], "tokenEndpoint": .string(base + "/token"),
                           "clientId": "cli", "dpop": true]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: h.configPath)
        var output: [String] = []
        for round in 0..<3 {
            let agent = try h.spawn()
            if round == 0 { XCTAssertEqual(try agent.call("login", AgentHarness.corp)["result"]?["account"], "alice") }
            // Ids of their own: a sign that waits (a proof whose nonce pool ran dry) keeps its id in flight.
            let signs = (1...5_000).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"sign","params":{"request":{"method":"GET","url":"\#(base)/api/me"}}}"# }
            try agent.send(signs.joined(separator: "\n"))
            for _ in 0..<5_000 {
                guard let line = agent.nextLine(timeout: 15) else { return XCTFail("no answer; stderr:\n\(agent.stderr)") }
                output.append(String(decoding: line, as: UTF8.self))
            }
            agent.closeInput()
            XCTAssertEqual(agent.waitForExit(timeout: 15), 0, agent.stderr)
            output.append(agent.stderr)
        }
        XCTAssertTrue(output[0].contains(#""DPoP":"#), output[0])
        let files = try FileManager.default.contentsOfDirectory(at: h.storeDirectory, includingPropertiesForKeys: nil)
        let key = files.compactMap { file in
            (try? Data(contentsOf: file)).flatMap { try? JSONParser.parse(Array($0)) }?["session"]?["dpopKey"]?.stringValue
        }.first
        let stored = try XCTUnwrap(key)
        XCTAssertFalse(output.contains { $0.contains(stored) }, "the private key is in no answer and no log line")
    }
}
