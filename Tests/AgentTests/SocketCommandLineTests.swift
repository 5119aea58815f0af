import DevIssuer
import Foundation
import JSON
import JSONRPC
import XCTest

/// The one-shot commands with `AUTH_AGENT_SOCK` set: they talk to the socket agent, with no
/// configuration of their own, and share its store — a memory store included.
final class SocketCommandLineTests: XCTestCase {
    /// The tools' environment: the agent's socket, and a configuration path that does not exist
    /// (named explicitly, so reading it would fail the command: nothing may read it).
    private func tool(_ harness: CLIHarness, _ agent: SocketAgentProcess, _ arguments: [String], stdin: String = "") throws -> CLIHarness.Finished {
        try harness.agent(arguments, stdin: stdin, environment: ["AUTH_AGENT_SOCK": agent.path,
                                                                 "AUTH_AGENT_CONFIG": harness.directory.appendingPathComponent("absent.json").path])
    }

    func testCommandsGoThroughTheSocketAgentAndShareItsMemoryStore() throws {
        let harness = try CLIHarness(memoryStore: true)
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path, environment: harness.environment)

        let login = try tool(harness, agent, ["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertTrue(login.stdout.hasPrefix("Logged in to Corp SSO as alice (token valid until "), login.stdout)
        XCTAssertFalse(login.stderr.contains("warn"), login.stderr)
        XCTAssertTrue(try tool(harness, agent, ["status"]).stdout.contains("alice"))

        // Two tools, one memory: the second gets the token the first one's login left in the agent.
        let first = try tool(harness, agent, ["token", "corp"])
        let second = try tool(harness, agent, ["token", "corp", "--json"])
        XCTAssertEqual(first.status, 0, first.stderr)
        let token = first.stdout.trimmingCharacters(in: .newlines)
        XCTAssertFalse(token.isEmpty)
        XCTAssertEqual(try JSONParser.parse(Array(second.stdout.utf8))["accessToken"]?.stringValue, token)

        let status = try JSONParser.parse(Array(try tool(harness, agent, ["status", "--json"]).stdout.utf8))
        XCTAssertEqual(status["store"]?["kind"], "memory")
        XCTAssertEqual(try tool(harness, agent, ["header", harness.issuer.baseURL + "/api/me"]).stdout, "Authorization: Bearer \(token)\n")
        let fetched = try tool(harness, agent, ["fetch", harness.issuer.baseURL + "/api/me"])
        XCTAssertEqual(fetched.status, 0, fetched.stderr)
        XCTAssertTrue(fetched.stdout.contains("\"preferred_username\":\"alice\""), fetched.stdout)

        // git's helper: the provider, its accounts and gitUsername come from the agent.
        let pasted = try tool(harness, agent, ["login", "pasted-git", "--token-stdin"], stdin: "git-token\n")
        XCTAssertEqual(pasted.status, 0, pasted.stderr)
        let git = try tool(harness, agent, ["git-credential", "get"], stdin: "protocol=https\nhost=git.pasted.example\n\n")
        XCTAssertEqual(git.stdout, "username=x-access-token\npassword=git-token\n", git.stderr)
        let uncovered = try tool(harness, agent, ["git-credential", "get"], stdin: "protocol=https\nhost=elsewhere.example\n\n")
        XCTAssertEqual(uncovered.status, 0)
        XCTAssertEqual(uncovered.stdout, "")

        // refresh, and token --min-valid longer than any token lives: refreshed, and said so.
        let refreshed = try tool(harness, agent, ["refresh", "corp"])
        XCTAssertEqual(refreshed.status, 0, refreshed.stderr)
        XCTAssertTrue(refreshed.stderr.hasPrefix("Refreshed the token of Corp SSO (token valid until "), refreshed.stderr)
        let current = try tool(harness, agent, ["token", "corp"]).stdout
        XCTAssertNotEqual(current, first.stdout)
        let longer = try tool(harness, agent, ["token", "corp", "--min-valid", "86400"])
        XCTAssertEqual(longer.status, 0, longer.stderr)
        XCTAssertNotEqual(longer.stdout, current, "refreshed first")
        XCTAssertTrue(longer.stderr.contains("less than the 86400 s asked for, even after a refresh"), longer.stderr)

        XCTAssertEqual(try tool(harness, agent, ["logout", "corp"]).stderr, "Logged out of Corp SSO; the server revoked the tokens.\n")
        XCTAssertEqual(try tool(harness, agent, ["logout", "corp"]).stderr, "Nobody is logged in to Corp SSO.\n")
        let after = try tool(harness, agent, ["token", "corp"])
        XCTAssertEqual(after.status, 1)
        XCTAssertTrue(after.stderr.contains("notLoggedIn"), after.stderr)
        XCTAssertEqual(try tool(harness, agent, ["token", "nope"]).status, 2, "an unknown provider is a usage error, as in-process")
    }

    /// An interactive login through the agent: its `loginPrompt` (the device code) is shown by the
    /// command on its own stderr; once approved, the command prints who logged in.
    func testADeviceLoginThroughTheSocketShowsTheAgentsPromptHere() throws {
        let harness = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1), memoryStore: true)
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path, environment: harness.environment)
        let process = Process()
        process.executableURL = AgentProcess.binaryURL
        process.arguments = ["login", "device"]
        process.environment = ProcessInfo.processInfo.environment.merging(["AUTH_AGENT_SOCK": agent.path]) { $1 }
        let output = Pipe(), errors = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = errors
        let out = CLIHarness.Collected(output.fileHandleForReading)
        try process.run()
        var shown = ""
        let deadline = Date().addingTimeInterval(20)
        var approved = false
        while !approved && Date() < deadline {
            let chunk = errors.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            shown += String(decoding: chunk, as: UTF8.self)
            if let range = shown.range(of: "enter the code ") {
                let code = shown[range.upperBound...].prefix { !$0.isWhitespace }
                approved = harness.issuer.approveDevice(userCode: String(code), username: "alice")
            }
        }
        XCTAssertTrue(approved, "the device code reached the command's stderr: \(shown)")
        while process.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(process.terminationStatus, 0, shown)
        XCTAssertTrue(out.text().hasPrefix("Logged in to Device Login as alice"), out.text())
        XCTAssertEqual(try tool(harness, agent, ["token", "device"]).status, 0, "the agent holds the session")
    }

    /// `auth-agent connect`: a host that spawns an agent on stdio reaches the socket agent through
    /// it — the same session state as other tools — and ends its connection at end of input;
    /// with no agent answering, `connect` serves on stdio itself.
    func testConnectRelaysAStdioHostToTheSocketAgentOrServesItself() throws {
        let harness = try CLIHarness(memoryStore: true)
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path, environment: harness.environment)
        let login = try tool(harness, agent, ["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(login.status, 0, login.stderr)
        let token = try tool(harness, agent, ["token", "corp"]).stdout.trimmingCharacters(in: .newlines)

        // The host puts its --config first, as the clients do; AUTH_AGENT_SOCK names the agent.
        let host = try AgentProcess(arguments: ["--config", harness.configPath.path, "connect"], environment: ["AUTH_AGENT_SOCK": agent.path])
        XCTAssertEqual(try host.call("initialize", ["protocolVersion": "1"])["result"]?["protocolVersion"], "1")
        XCTAssertEqual(try host.call("token", ["provider": "corp"], id: 2)["result"]?["accessToken"]?.stringValue, token)
        host.closeInput()
        XCTAssertEqual(host.waitForExit(timeout: 10), 0)
        XCTAssertFalse(host.stderr.contains("warn"), host.stderr)

        // No agent: the relay is a stdio agent on the configuration (here a memory store: logged out).
        let alone = try AgentProcess(arguments: ["connect", "--socket", harness.directory.appendingPathComponent("run/none.sock").path, "--config", harness.configPath.path],
                                     environment: [:])
        let status = try alone.call("status")
        XCTAssertEqual(status["result"]?["providers"]?.arrayValue?.first { $0["id"] == "corp" }?["state"], "loggedOut")
        alone.closeInput()
        XCTAssertEqual(alone.waitForExit(timeout: 10), 0)
        // Read once the agent has exited: stderr and stdout are read by two threads, so the warning
        // written before the answer may still be on its way when the answer arrives.
        XCTAssertTrue(alone.stderr.contains("not using the agent at"), alone.stderr)
    }

    /// Each client, as it is, through `auth-agent connect` (args `connect`): the token the
    /// socket agent holds in memory. A client whose runtime is missing is left out, with a note.
    func testEachClientThroughTheSocket() throws {
        let harness = try CLIHarness(memoryStore: true)
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path, environment: harness.environment)
        XCTAssertEqual(try tool(harness, agent, ["login", "pasted", "--token-stdin"], stdin: "tok-from-memory\n").status, 0)
        let clients = CLIHarness.scripts.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("clients")
        let bin = AgentProcess.binaryURL.path
        let runs: [(runtime: String, arguments: [String])] = [
            ("python3", ["-c", "import sys; sys.path.insert(0, '\(clients.path)/python')\nfrom auth_agent import AuthAgent\n"
                + "with AuthAgent('\(bin)', args=['connect']) as a: print(a.token('pasted')['accessToken'])"]),
            ("node", ["-e", "import('\(clients.path)/node/index.js').then(async ({ AuthAgent }) => { const a = new AuthAgent({ bin: '\(bin)', args: ['connect'] }); "
                + "console.log((await a.token({ provider: 'pasted' })).accessToken); await a.close(); }).catch(e => { console.error(e); process.exit(1); })"]),
            ("bash", ["-c", "source '\(clients.path)/bash/auth-agent.sh' && auth_agent_start --bin '\(bin)' connect && auth_agent_token pasted; echo; auth_agent_stop"]),
            ("nvim", ["--headless", "-u", "NONE", "--cmd", "set rtp+=\(clients.path)/nvim", "-c",
                      "lua local m = require('auth_agent'); m.setup({ bin = '\(bin)', args = { 'connect' } }); "
                      + "m.token('pasted', function(err, r) io.stdout:write((r and r.accessToken or vim.inspect(err)) .. '\\n'); vim.schedule(function() vim.cmd('qa!') end) end)"]),
        ]
        var ran = 0
        for run in runs {
            guard let runtime = CLIHarness.which(run.runtime) else {
                print("note: \(run.runtime) is not installed; its client is not run through the socket")
                continue
            }
            let r = try CLIHarness.run(runtime, run.arguments, environment: ["AUTH_AGENT_SOCK": agent.path, "AUTH_AGENT_CONFIG": "/nonexistent/config.json"], timeout: 60)
            XCTAssertEqual(r.status, 0, "\(run.runtime): \(r.stderr)")
            XCTAssertEqual(r.stdout.split(separator: "\n").first.map(String.init), "tok-from-memory", "\(run.runtime): \(r.stdout) \(r.stderr)")
            ran += 1
        }
        if ran == 0 { throw XCTSkip("no client runtime (python3, node, bash, nvim) is installed") }
    }

    /// A socket that takes the connection but never answers: within about a second the command
    /// says so on one line and uses the store; a socket path with nothing there, at once.
    func testASocketThatDoesNotAnswerFallsBackToTheStore() throws {
        let harness = try CLIHarness()
        try harness.login()
        let directory = harness.directory.appendingPathComponent("mute")
        try UnixSocket.prepareDirectory(of: directory.appendingPathComponent("x").path)
        let mute = directory.appendingPathComponent("agent.sock").path
        let listener = try UnixSocket.listen(at: mute)
        defer { close(listener) }
        for path in [mute, directory.appendingPathComponent("gone.sock").path] {
            let started = Date()
            let r = try harness.agent(["status"], environment: ["AUTH_AGENT_SOCK": path])
            XCTAssertLessThan(Date().timeIntervalSince(started), 3)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(r.stdout.contains("alice"), "answered from the store: \(r.stdout)")
            let warnings = r.stderr.split(separator: "\n").filter { $0.contains("not using the agent at AUTH_AGENT_SOCK") }
            XCTAssertEqual(warnings.count, 1, r.stderr)
        }
    }

    /// A socket another user serves is not the agent (a login would type passwords into it):
    /// the command says so and uses the store. The stranger is socat run as `nobody`, answering a ping
    /// and holding each connection until the client hangs up (a `sleep 2` there held the end of the
    /// test: stopping socat waited for it).
    func testASocketServedByAnotherUserIsNotUsed() throws {
        guard geteuid() == 0 else { throw XCTSkip("running as another user with setpriv needs root") }
        guard let setpriv = CLIHarness.which("setpriv") else { throw XCTSkip("setpriv (util-linux) is not installed") }
        guard let socat = CLIHarness.which("socat") else { throw XCTSkip("socat is not installed (apt-get install socat)") }
        let harness = try CLIHarness()
        try harness.login()
        chmod(harness.directory.path, 0o755)
        let open = harness.directory.appendingPathComponent("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        let path = open.appendingPathComponent("agent.sock").path
        let stranger = Process()
        stranger.executableURL = URL(fileURLWithPath: setpriv)
        stranger.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", socat, "UNIX-LISTEN:\(path),fork,mode=777",
                              #"SYSTEM:echo '{"jsonrpc":"2.0","id":1,"result":{}}'; cat >/dev/null"#]
        try stranger.run()
        defer { stranger.terminate(); stranger.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: path) && Date() < deadline { usleep(20_000) }
        let r = try harness.agent(["status"], environment: ["AUTH_AGENT_SOCK": path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("alice"), "answered from the store: \(r.stdout)")
        XCTAssertTrue(r.stderr.contains("not using the agent at AUTH_AGENT_SOCK (it is served by uid 65534, not by this user)"), r.stderr)
    }

    /// An `ssh -R` forward stood in for by socat: on the "remote" side git has no configuration,
    /// only AUTH_AGENT_SOCK; its clone gets the token of a login made on the "local" side.
    func testAForwardedSocketServesARemoteGitClone() throws {
        try CLIHarness.requirePython()
        guard let git = CLIHarness.which("git") else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        guard let socat = CLIHarness.which("socat") else { throw XCTSkip("socat is not installed (apt-get install socat)") }
        let harness = try CLIHarness()
        let root = harness.directory.appendingPathComponent("repos")
        let work = harness.directory.appendingPathComponent("work")
        let gitEnvironment = ["GIT_CONFIG_NOSYSTEM": "1", "HOME": harness.directory.path, "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_TERMINAL_PROMPT": "0"]
        for args in [["init", "-q", "-b", "main", work.path], ["-C", work.path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"],
                     ["clone", "-q", "--bare", work.path, root.appendingPathComponent("repo.git").path]] {
            XCTAssertEqual(try CLIHarness.run(git, args, environment: gitEnvironment).status, 0)
        }
        let server = try ScriptServer("git_server.py", [root.path, harness.issuer.baseURL])
        let origin = "http://127.0.0.1:\(server.port)"
        try harness.writeConfig(extraOrigins: [origin])
        let forwardPath = harness.directory.appendingPathComponent("fwd/agent.sock").path
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path,
                                           arguments: ["--forward-socket", forwardPath, "--forward-providers", "corp"], environment: harness.environment)
        let remoteSocket = harness.directory.appendingPathComponent("remote.sock").path
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: socat)
        relay.arguments = ["UNIX-LISTEN:\(remoteSocket),fork", "UNIX-CONNECT:\(forwardPath)"]
        try relay.run()
        defer { relay.terminate(); relay.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: remoteSocket) && Date() < deadline { usleep(20_000) }

        // The remote side: no configuration, no store; only the forwarded socket.
        let remote = gitEnvironment.merging(["AUTH_AGENT_SOCK": remoteSocket, "AUTH_AGENT_CONFIG": harness.directory.appendingPathComponent("absent.json").path,
                                             "XDG_STATE_HOME": harness.directory.appendingPathComponent("remote-state").path]) { $1 }
        let helper = "!\(AgentProcess.binaryURL.path) git-credential"
        func clone(_ name: String) throws -> CLIHarness.Finished {
            try CLIHarness.run(git, ["-c", "credential.helper=", "-c", "credential.helper=\(helper)", "clone", "-q", origin + "/repo.git", name],
                               environment: remote, directory: harness.directory, timeout: 60)
        }
        let refused = try clone("refused")
        XCTAssertNotEqual(refused.status, 0, "nobody is logged in yet")
        XCTAssertTrue(refused.stderr.contains("run: auth-agent login corp"), refused.stderr)

        // The login happens on the laptop, at the agent itself.
        let local = try tool(harness, agent, ["login", "corp", "--username", "alice", "--password-stdin"], stdin: "wonderland\n")
        XCTAssertEqual(local.status, 0, local.stderr)
        usleep(600_000)  // the forward socket's service sees the login through the store's 250 ms watch
        let cloned = try clone("clone")
        XCTAssertEqual(cloned.status, 0, cloned.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.directory.appendingPathComponent("clone/.git").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: harness.directory.appendingPathComponent("remote-state").path), "nothing kept on the remote side")
    }

    /// The remote side of a forwarded socket logs in through a browser: the agent, on the
    /// "laptop" (a display there), opens the browser there — an opener that follows the login
    /// back to the agent's loopback listener — and the remote login and git clone, with no
    /// configuration of their own, get the token.
    func testARemoteBrowserLoginIsCompletedOnTheLocalSide() throws {
        try CLIHarness.requirePython()
        guard let git = CLIHarness.which("git") else { throw XCTSkip("git is not installed (.ci/run installs it)") }
        guard let socat = CLIHarness.which("socat") else { throw XCTSkip("socat is not installed (apt-get install socat)") }
        guard CLIHarness.which("curl") != nil else { throw XCTSkip("curl is not installed") }
        let harness = try CLIHarness()
        harness.issuer.setAutoApprove(username: "alice")
        let root = harness.directory.appendingPathComponent("repos")
        let work = harness.directory.appendingPathComponent("work")
        let gitEnvironment = ["GIT_CONFIG_NOSYSTEM": "1", "HOME": harness.directory.path, "GIT_ASKPASS": "", "SSH_ASKPASS": "", "GIT_TERMINAL_PROMPT": "0"]
        for args in [["init", "-q", "-b", "main", work.path], ["-C", work.path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "first"],
                     ["clone", "-q", "--bare", work.path, root.appendingPathComponent("repo.git").path]] {
            XCTAssertEqual(try CLIHarness.run(git, args, environment: gitEnvironment).status, 0)
        }
        let server = try ScriptServer("git_server.py", [root.path, harness.issuer.baseURL])
        let origin = "http://127.0.0.1:\(server.port)"
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": [.string(origin)],
                           "issuer": .string(harness.issuer.baseURL), "clientId": "cli", "openBrowser": true]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: harness.configPath)
        // The laptop's browser: an opener that follows the authorization URL to its end, the agent's callback.
        let bin = harness.directory.appendingPathComponent("bin")
        let opened = harness.directory.appendingPathComponent("opened.html")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let opener = bin.appendingPathComponent("xdg-open")
        try "#!/bin/sh\nexec curl -sfL -o '\(opened.path)' \"$1\"\n".write(to: opener, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        let laptop = harness.environment.merging(["DISPLAY": ":99", "PATH": bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]) { $1 }
        let forwardPath = harness.directory.appendingPathComponent("fwd/agent.sock").path
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path,
                                           arguments: ["--forward-socket", forwardPath, "--forward-providers", "web"], environment: laptop)
        let remoteSocket = harness.directory.appendingPathComponent("remote.sock").path
        let relay = Process()
        relay.executableURL = URL(fileURLWithPath: socat)
        relay.arguments = ["UNIX-LISTEN:\(remoteSocket),fork", "UNIX-CONNECT:\(forwardPath)"]
        try relay.run()
        defer { relay.terminate(); relay.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: remoteSocket) && Date() < deadline { usleep(20_000) }

        // The remote side: over SSH without a display, no configuration; only the forwarded socket.
        let remote = gitEnvironment.merging(["AUTH_AGENT_SOCK": remoteSocket, "AUTH_AGENT_CONFIG": harness.directory.appendingPathComponent("absent.json").path,
                                             "SSH_CONNECTION": "10.0.0.2 50000 10.0.0.1 22", "DISPLAY": "",
                                             "XDG_STATE_HOME": harness.directory.appendingPathComponent("remote-state").path]) { $1 }
        let status = try CLIHarness.run(AgentProcess.binaryURL.path, ["status", "--json"], environment: remote)
        XCTAssertEqual(try JSONParser.parse(status.stdout)["providers"]?.arrayValue?.first?["interactive"], "browser", "the agent's display decides: \(status.stdout)")
        let login = try CLIHarness.run(AgentProcess.binaryURL.path, ["login", "web"], environment: remote, timeout: 60)
        XCTAssertEqual(login.status, 0, login.stderr)
        XCTAssertTrue(login.stderr.contains("open this URL in a browser"), "the prompt came to the remote terminal: \(login.stderr)")
        XCTAssertTrue((login.stdout + login.stderr).contains("Logged in to Web SSO as alice"), login.stdout + login.stderr)
        XCTAssertTrue(try String(contentsOf: opened, encoding: .utf8).contains("You are signed in to Web SSO"), "the laptop's browser finished it")
        let cloned = try CLIHarness.run(git, ["-c", "credential.helper=", "-c", "credential.helper=!\(AgentProcess.binaryURL.path) git-credential",
                                              "clone", "-q", origin + "/repo.git", "clone"], environment: remote, directory: harness.directory, timeout: 60)
        XCTAssertEqual(cloned.status, 0, cloned.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: harness.directory.appendingPathComponent("clone/.git").path))
        _ = agent
    }

    /// A socket agent over SSH without a display (`status` says `paste`, no browser is opened):
    /// the login at a terminal through the socket shows the URL, and the redirect URL pasted
    /// there goes to the agent as `completeLogin` on a connection of its own.
    func testPasteBackAtATerminalThroughTheSocket() throws {
        try CLIHarness.requirePython()
        let harness = try CLIHarness()
        harness.issuer.setAutoApprove(username: "alice")
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(harness.issuer.baseURL), "clientId": "cli", "openBrowser": true]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: harness.configPath)
        let headless = harness.environment.merging(["SSH_CONNECTION": "10.0.0.2 50000 10.0.0.1 22", "DISPLAY": "", "WAYLAND_DISPLAY": ""]) { $1 }
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path, environment: headless)
        let status = try tool(harness, agent, ["status", "--json"])
        XCTAssertEqual(try JSONParser.parse(status.stdout)["providers"]?.arrayValue?.first?["interactive"], "paste", status.stdout)
        let log = harness.directory.appendingPathComponent("pty.log")
        let good = harness.directory.appendingPathComponent("good")
        let browser = Thread {
            for _ in 0..<400 {
                if let text = try? String(contentsOf: log, encoding: .utf8), let range = text.range(of: "open this URL in a browser:\r\n  ") {
                    let url = String(text[range.upperBound...].prefix { !$0.isWhitespace })
                    if let last = try? Browser().navigate(url, stopAt: { $0.path == "/callback" }), let redirect = last.location {
                        try? (redirect + "\n").write(to: good, atomically: true, encoding: .utf8)
                    }
                    return
                }
                usleep(50_000)
            }
        }
        browser.start()
        let steps: JSONValue = [["expect": "login waits", "sendFile": .string(good.path)]]
        let r = try CLIHarness.run("/usr/bin/env", ["python3", CLIHarness.scripts.appendingPathComponent("pty_drive.py").path, JSONSerializer.string(steps),
                                                    AgentProcess.binaryURL.path, "login", "web"],
                                   environment: ["AUTH_AGENT_SOCK": agent.path, "AUTH_AGENT_CONFIG": harness.directory.appendingPathComponent("absent.json").path,
                                                 "PTY_LOG": log.path], timeout: 90)
        let output = try JSONParser.parse(r.stdout)["output"]?.stringValue ?? r.stdout
        XCTAssertTrue(output.contains("paste here the whole address it ends at"), output)
        XCTAssertTrue(output.contains("Logged in to Web SSO as alice"), output.debugDescription)
    }

    /// A browser login started on the forward socket, finished by `completeLogin` from a connection
    /// to the main socket (one agent process, one set of waiting logins): another login's state is
    /// refused and the login keeps waiting; the right URL finishes it, once.
    func testCompleteLoginFromAnotherConnectionOfTheAgent() throws {
        let harness = try CLIHarness()
        harness.issuer.setAutoApprove(username: "alice")
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(harness.issuer.baseURL), "clientId": "cli", "openBrowser": false]],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: harness.configPath)
        let forwardPath = harness.directory.appendingPathComponent("fwd/agent.sock").path
        let agent = try SocketAgentProcess(path: harness.directory.appendingPathComponent("run/agent.sock").path,
                                           arguments: ["--forward-socket", forwardPath, "--forward-providers", "web"], environment: harness.environment)
        let remote = try SocketClient(forwardPath)
        remote.send(["jsonrpc": "2.0", "id": 1, "method": "login", "params": ["provider": "web"]])
        let prompt = try XCTUnwrap(remote.next())
        XCTAssertEqual(prompt["method"], "loginPrompt")
        let url = try XCTUnwrap(prompt["params"]?["url"]?.stringValue)
        let redirect = try XCTUnwrap(try Browser().navigate(url, stopAt: { $0.path == "/callback" }).location)

        let local = try SocketClient(agent.path)
        let forged = local.call("completeLogin", ["requestId": 1, "redirectUrl": .string(redirect.replacingOccurrences(of: "state=", with: "state=x"))], id: 1)
        XCTAssertEqual(forged?["error"]?["code"], -32602)
        XCTAssertTrue(forged?["error"]?["message"]?.stringValue?.contains("state does not match") == true, "\(String(describing: forged))")
        XCTAssertEqual(local.call("completeLogin", ["requestId": 1, "redirectUrl": .string(redirect)], id: 2)?["result"], [:])
        let answer = try XCTUnwrap(remote.next())
        XCTAssertEqual(answer["id"], 1)
        XCTAssertEqual(answer["result"]?["account"], "alice", "the login's own request gets the login's answer: \(answer)")
        let again = local.call("completeLogin", ["requestId": 1, "redirectUrl": .string(redirect)], id: 3)
        XCTAssertTrue(again?["error"]?["message"]?.stringValue?.contains("already used") == true, "\(String(describing: again))")
    }
}
