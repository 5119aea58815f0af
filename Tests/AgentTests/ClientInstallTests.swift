import Foundation
import TestSupport
import XCTest

/// Each client installed exactly as its README says, into a place that has nothing else (a fresh
/// virtualenv, an empty npm project, another directory, a bare Neovim), then the README's first
/// example run against the built agent. The client suites (ClientSuitesTests) test the libraries
/// from the source tree and so never saw an install that fails for every user; these read the
/// commands and the example out of the README, so the README cannot drift from what works.
///
/// The clone is a copy of `clients/NAME` under a fresh `$HOME/src/auth-agent` (where the READMEs
/// say it is): an install that builds in place (pip) leaves nothing in the source tree.
final class ClientInstallTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `pip install './clients/python[requests,httpx]'` in a fresh virtualenv, then the first example.
    func testPythonClientInstallsAsTheReadmeSays() throws {
        let place = try Place(client: "python")
        defer { place.remove() }
        let blocks = try readme("python")
        let install = try XCTUnwrap(blocks.first { $0.language == "sh" }?.code.split(separator: "\n").first { $0.contains("[requests,httpx]") },
                                    "the README's install block has the line with both extras")
        let venv = place.directory.appendingPathComponent("venv")
        guard CLIHarness.which("python3") != nil,
              (try? CLIHarness.run("/usr/bin/env", ["python3", "-m", "venv", venv.path], timeout: 120).status) == 0 else {
            throw XCTSkip("python3 -m venv is unavailable (on Debian: apt-get install python3-venv)")
        }
        let environment = ["PATH": venv.appendingPathComponent("bin").path + ":" + Self.path, "VIRTUAL_ENV": venv.path,
                           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"]
        // pip needs PyPI for setuptools (the build) and the extras: without it, say so and skip.
        let probe = try CLIHarness.run("/usr/bin/env", ["pip", "download", "--quiet", "--no-deps", "--dest", place.directory.appendingPathComponent("probe").path, "setuptools"],
                                       environment: environment, timeout: 120)
        guard probe.status == 0 else { throw XCTSkip("PyPI is not reachable (pip download setuptools failed): \(probe.stderr.suffix(300))") }

        let installed = try place.shell(String(install), in: place.clone, environment: environment, timeout: 300)
        XCTAssertEqual(installed.status, 0, "\(install)\n\(installed.stdout)\(installed.stderr)")
        let imports = try CLIHarness.run(venv.appendingPathComponent("bin/python").path, ["-c", "import auth_agent.requests, auth_agent.httpx"],
                                         directory: place.directory, timeout: 60)
        XCTAssertEqual(imports.status, 0, "both adapters and their extras import: \(imports.stderr)")

        let example = try XCTUnwrap(blocks.first { $0.language == "python" }?.code, "the README has a Python example")
        let script = place.directory.appendingPathComponent("example.py")
        try example.write(to: script, atomically: true, encoding: .utf8)
        let run = try CLIHarness.run(venv.appendingPathComponent("bin/python").path, [script.path], environment: place.agentEnvironment,
                                     directory: place.directory, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("200 Alice"), run.stdout)
        XCTAssertTrue(run.stdout.contains("Logged out of demo (logout)"), run.stdout)
    }

    /// `npm install ~/src/auth-agent/clients/node` into an empty project (no registry needed for a
    /// directory without dependencies), then the first example as `example.mjs`.
    func testNodeClientInstallsAsTheReadmeSays() throws {
        guard CLIHarness.which("node") != nil, CLIHarness.which("npm") != nil else { throw XCTSkip("node and npm are not installed") }
        let place = try Place(client: "node")
        defer { place.remove() }
        let blocks = try readme("node")
        let install = try XCTUnwrap(blocks.first { $0.language == "sh" }?.code, "the README has an install block")
        let project = place.directory.appendingPathComponent("project")
        try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
        // No audit or update check: they would ask a registry, and the install needs none.
        let quiet = ["npm_config_audit": "false", "npm_config_fund": "false", "npm_config_update_notifier": "false"]
        let installed = try place.shell(install, in: project, environment: quiet, timeout: 120)
        XCTAssertEqual(installed.status, 0, "\(install)\n\(installed.stdout)\(installed.stderr)")

        let example = try XCTUnwrap(blocks.first { $0.language == "js" }?.code, "the README has a JavaScript example")
        try example.write(to: project.appendingPathComponent("example.mjs"), atomically: true, encoding: .utf8)
        let run = try CLIHarness.run("/usr/bin/env", ["node", "example.mjs"], environment: place.agentEnvironment, directory: project, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("200 alice"), run.stdout)
        XCTAssertTrue(run.stdout.contains("Logged out of demo (logout)"), run.stdout)
    }

    /// The example sources `~/src/auth-agent/clients/bash/auth-agent.sh` from another directory
    /// and logs in with the username and password typed on stdin.
    func testBashClientRunsFromAnotherDirectoryAsTheReadmeSays() throws {
        guard CLIHarness.which("jq") != nil else { throw XCTSkip("jq is not installed; the Bash client needs it") }
        let place = try Place(client: "bash")
        defer { place.remove() }
        let example = try XCTUnwrap(try readme("bash").first { $0.language == "bash" }?.code, "the README has a Bash example")
        let elsewhere = place.directory.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let script = elsewhere.appendingPathComponent("example.sh")
        try example.write(to: script, atomically: true, encoding: .utf8)
        let run = try CLIHarness.run("/bin/bash", [script.path], stdin: "alice\nwonderland\n", environment: place.agentEnvironment,
                                     directory: elsewhere, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("\"preferred_username\":\"alice\""), "the signed request answered: \(run.stdout)")
        XCTAssertTrue(run.stdout.contains("logged out of demo"), run.stdout)
    }

    /// The lazy.nvim spec, saved where the README says, loaded into `nvim --clean -u NONE` the way
    /// lazy.nvim loads a plugin (its `dir` on 'runtimepath', its plugin/ files, then `config`);
    /// then `:AuthAgentLogin demo` (alice, wonderland typed), `:WhoAmI`, `:AuthAgentLogout demo`.
    func testNeovimPluginLoadsFromAFreshRuntimepathAsTheReadmeSays() throws {
        guard CLIHarness.which("nvim") != nil else { throw XCTSkip("nvim is not installed (apt-get install neovim)") }
        let place = try Place(client: "nvim")
        defer { place.remove() }
        let spec = try XCTUnwrap(try readme("nvim").first { $0.language == "lua" }?.code, "the README has a lazy.nvim spec")
        let specFile = place.home.appendingPathComponent(".config/nvim/lua/plugins/auth_agent.lua")
        try FileManager.default.createDirectory(at: specFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try spec.write(to: specFile, atomically: true, encoding: .utf8)
        let driver = place.directory.appendingPathComponent("driver.lua")
        try Self.neovimDriver.write(to: driver, atomically: true, encoding: .utf8)
        let run = try CLIHarness.run("/usr/bin/env", ["nvim", "--clean", "-u", "NONE", "-i", "NONE", "--headless", "-c", "luafile \(driver.path)"],
                                     environment: place.agentEnvironment, directory: place.directory, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("notify: 200 alice"), run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("notify: Logged out of demo: logout"), run.stdout + run.stderr)
    }

    /// Plays lazy.nvim and the person: every `vim.notify` is printed, the login fields are typed.
    private static let neovimDriver = """
        local function out(line) io.stdout:write(line, "\\n"); io.stdout:flush() end
        local seen = {}
        vim.notify = function(message) out("notify: " .. tostring(message)); table.insert(seen, tostring(message)) end
        local function wait_for(pattern)
          local found = vim.wait(20000, function()
            for _, m in ipairs(seen) do if m:find(pattern) then return true end end
            return false
          end, 20)
          if not found then out("timed out waiting for " .. pattern); vim.cmd("cquit 1") end
        end
        local answers = { "alice", "wonderland" }
        vim.fn.input = function() return table.remove(answers, 1) end
        vim.fn.inputsecret = vim.fn.input

        local spec = dofile(vim.fn.expand("~/.config/nvim/lua/plugins/auth_agent.lua"))
        vim.opt.runtimepath:prepend(vim.fn.expand(spec.dir))
        vim.cmd("runtime! plugin/**/*.lua")
        spec.config(spec, spec.opts)
        vim.cmd("AuthAgentLogin demo")
        wait_for("^Logged in")
        vim.cmd("WhoAmI")
        wait_for("^200 ")
        vim.cmd("AuthAgentLogout demo")
        wait_for("^Logged out of demo")
        vim.cmd("qall!")
        """

    // MARK: - The README and the clean place

    struct Block { let language: String; let code: String }

    /// The fenced code blocks of `clients/NAME/README.md`, in order.
    private func readme(_ client: String) throws -> [Block] {
        let text = try String(contentsOf: Self.root.appendingPathComponent("clients/\(client)/README.md"), encoding: .utf8)
        var blocks: [Block] = []
        var open: (language: String, lines: [Substring])?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                if let o = open { blocks.append(Block(language: o.language, code: o.lines.joined(separator: "\n") + "\n")); open = nil }
                else { open = (String(line.dropFirst(3)).trimmingCharacters(in: .whitespaces), []) }
            } else {
                open?.lines.append(line)
            }
        }
        return blocks
    }

    private static var path: String { ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin" }

    /// A fresh directory with `home/src/auth-agent/clients/NAME`, a copy of the client.
    struct Place {
        let directory: URL
        var home: URL { directory.appendingPathComponent("home") }
        var clone: URL { home.appendingPathComponent("src/auth-agent") }

        init(client: String) throws {
            directory = try TemporaryDirectory(prefix: "auth-agent-install-\(client)").url
            let target = directory.appendingPathComponent("home/src/auth-agent/clients/\(client)")
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: ClientInstallTests.root.appendingPathComponent("clients/\(client)"), to: target)
            print("\(client): installed under \(directory.path)")
        }

        /// `$HOME` here, and the built agent as `$AUTH_AGENT_BIN` (how every README finds it).
        var agentEnvironment: [String: String] {
            ["HOME": home.path, "AUTH_AGENT_BIN": AgentProcess.binaryURL.path]
        }

        /// A README command line run by bash (so `~` and quotes mean what they mean to a reader).
        func shell(_ command: String, in directory: URL, environment: [String: String] = [:], timeout: Double) throws -> CLIHarness.Finished {
            try CLIHarness.run("/bin/bash", ["-c", command], environment: agentEnvironment.merging(environment) { $1 }, directory: directory, timeout: timeout)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }
}
