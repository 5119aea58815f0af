@testable import AuthCore
@testable import auth_agent
import Foundation
import JSON
import TestSupport
import XCTest

/// Issue 35: what people install without Swift. `clients/package.sh` builds the wheel, the npm
/// packages and the `.deb` from this checkout, once per run; each test installs one of them in a
/// fresh place whose `PATH` has no Swift and no other agent, and runs from that install what users
/// run: the README's piped `auth-agent demo` example, the client README's first example (which
/// finds the bundled agent, nothing else being there), and `auth-agent mcp` at the dev issuer's
/// `/mcp` with the official MCP Python SDK as the host.
///
/// The static release build is the costly part: the one in `.build/release` is reused when it is
/// static (or `AUTH_AGENT_RELEASE_BIN`), else built once into `.build/packaging` (kept for the
/// next run). Tools come from PyPI into a cached virtualenv (auditwheel, uv, pipx:
/// Tests/Packaging/requirements.txt; the SDK: Tests/MCP/requirements.txt); each part skips with
/// a message where its tool or PyPI is missing.
final class PackagingTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Artefacts {
        let directory: URL
        let output: String
        let version: String
        let built: URL

        func file(_ suffix: String) throws -> URL {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            let name = try XCTUnwrap(names.first { $0.hasSuffix(suffix) }, "no *\(suffix) among \(names)")
            return directory.appendingPathComponent(name)
        }
        var platformWheel: URL {
            get throws {
                let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
                return directory.appendingPathComponent(try XCTUnwrap(names.first { $0.hasPrefix("auth_agent-") && $0.hasSuffix(".whl") }))
            }
        }
    }

    nonisolated(unsafe) private static var made: Result<Artefacts, any Error>?

    override class func tearDown() {
        if case .success(let artefacts) = made { try? FileManager.default.removeItem(at: artefacts.directory) }
        made = nil
        super.tearDown()
    }

    /// The artefacts of one `clients/package.sh` run, shared by every test of the class.
    private func artefacts() throws -> Artefacts {
        if Self.made == nil { Self.made = Result { try Self.package() } }
        return try Self.made!.get()
    }

    private static func package() throws -> Artefacts {
        for tool in ["python3", "node", "npm", "dpkg-deb", "readelf", "strip"] where CLIHarness.which(tool) == nil {
            throw XCTSkip("\(tool) is not installed; clients/package.sh needs it")
        }
        let binary = try releaseBinary()
        let directory = try TemporaryDirectory(prefix: "auth-agent-packages").url
        let run = try CLIHarness.run("/bin/bash", [root.appendingPathComponent("clients/package.sh").path, directory.path],
                                     environment: ["AUTH_AGENT_PACKAGE_BINARY": binary.path], directory: root, timeout: 300)
        guard run.status == 0 else { throw Failure("clients/package.sh failed:\n\(run.stdout)\(run.stderr)") }
        print("clients/package.sh:\n\(run.stdout)")
        let version = try CLIHarness.run(binary.path, ["--version"]).stdout.split(separator: " ").last.map { String($0.dropLast()) } ?? ""
        return Artefacts(directory: directory, output: run.stdout, version: version, built: binary)
    }

    /// A static release build: AUTH_AGENT_RELEASE_BIN, else `.build/release`'s when it is static,
    /// else one built now into `.build/packaging` (a scratch path of its own, so this `swift test`'s
    /// build directory is not locked; incremental on the next run).
    private static func releaseBinary() throws -> URL {
        if let given = ProcessInfo.processInfo.environment["AUTH_AGENT_RELEASE_BIN"], !given.isEmpty { return URL(fileURLWithPath: given) }
        let existing = root.appendingPathComponent(".build/release/auth-agent")
        if FileManager.default.isExecutableFile(atPath: existing.path), try isStatic(existing) {
            let date = (try? FileManager.default.attributesOfItem(atPath: existing.path)[.modificationDate]) ?? "?"
            print("packaging the static release build at \(existing.path) (built \(date))")
            return existing
        }
        guard let swift = CLIHarness.which("swift") else { throw XCTSkip("no static release build and no swift to make one") }
        let scratch = root.appendingPathComponent(".build/packaging")
        print("building the static release binary into \(scratch.path) (once; later runs are incremental)")
        let build = try CLIHarness.run(swift, ["build", "-c", "release", "--static-swift-stdlib", "--disable-local-rpath", "--product", "auth-agent",
                                               "--scratch-path", scratch.path], directory: root, timeout: 1500)
        guard build.status == 0 else { throw Failure("the static release build failed:\n\(build.stdout.suffix(3000))\(build.stderr.suffix(3000))") }
        return scratch.appendingPathComponent("release/auth-agent")
    }

    private static func isStatic(_ binary: URL) throws -> Bool {
        !(try CLIHarness.run("/usr/bin/env", ["readelf", "-d", binary.path]).stdout.contains("libswift"))
    }

    /// Node's name for this machine's processor, as in the platform package's name.
    private static var nodeArch: String {
        var name = utsname()
        uname(&name)
        let machine = withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        return machine == "aarch64" ? "arm64" : "x64"
    }

    // MARK: - The script

    /// The packages take the agent's version (`auth-agent --version`, `CommandHelp.version`); every
    /// other place that states one must say the same, or a package would ship two numbers.
    func testEveryDeclaredVersionIsTheAgents() throws {
        let agent = CommandHelp.version
        XCTAssertEqual(ClientRegistration.softwareVersion, agent, "the software_version a registration sends")
        let python = try String(contentsOf: Self.root.appendingPathComponent("clients/python/auth_agent/_version.py"), encoding: .utf8)
        XCTAssertEqual(python, "__version__ = \"\(agent)\"\n", "clients/python/auth_agent/_version.py")
        let node = try JSONParser.parse(Array(try Data(contentsOf: Self.root.appendingPathComponent("clients/node/package.json"))))
        XCTAssertEqual(node["version"]?.stringValue, agent, "clients/node/package.json")
    }

    func testTheScriptBuildsEveryArtefactWithItsSumAndSize() throws {
        let made = try artefacts()
        let v = made.version
        let expected = ["auth_agent_client-\(v)-py3-none-any.whl", "auth-agent-\(v).tgz", "auth-agent-linux-\(Self.nodeArch)-\(v).tgz",
                        "auth-agent-client-\(v).tgz", "auth-agent_\(v)_\(Self.nodeArch == "x64" ? "amd64" : "arm64").deb"]
        for name in expected {
            XCTAssertTrue(FileManager.default.fileExists(atPath: made.directory.appendingPathComponent(name).path), "\(name) was not built")
            XCTAssertTrue(made.output.contains(name), "the script prints \(name) with its size: \(made.output)")
        }
        let wheel = try made.platformWheel.lastPathComponent
        XCTAssertTrue(made.output.contains(wheel), made.output)
        XCTAssertTrue(made.output.contains("stripped"), "the script states the binary's size, built and stripped: \(made.output)")
        let sums = try CLIHarness.run("/usr/bin/env", ["sha256sum", "--check", "--strict", "SHA256SUMS"], directory: made.directory)
        XCTAssertEqual(sums.status, 0, sums.stdout + sums.stderr)
        XCTAssertEqual(sums.stdout.split(separator: "\n").count, expected.count + 1, "a sum for each artefact: \(sums.stdout)")

        // The packaged binary is the stripped one: no symbol table, well under the build's size.
        let unpacked = try TemporaryDirectory(prefix: "auth-agent-wheel").url
        defer { try? FileManager.default.removeItem(at: unpacked) }
        let unzip = try CLIHarness.run("/usr/bin/env", ["python3", "-m", "zipfile", "-e", try made.platformWheel.path, unpacked.path])
        XCTAssertEqual(unzip.status, 0, unzip.stderr)
        let carried = unpacked.appendingPathComponent("auth_agent/bin/auth-agent")
        let sections = try CLIHarness.run("/usr/bin/env", ["readelf", "-S", "--wide", carried.path]).stdout
        XCTAssertFalse(sections.contains(".symtab"), "the carried agent is stripped")
        let size = { (url: URL) in (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0 }
        XCTAssertLessThan(try size(carried), try size(made.built))
    }

    /// The wheel's tag and the .deb's libc6 dependency name the glibc the binary truly needs — as
    /// auditwheel (PyPI) reads it from the symbol versions, GLIBC_ABI_DT_RELR included.
    func testTheTagAndTheDependencyNameTheGlibcTheBinaryNeeds() throws {
        let made = try artefacts()
        let wheel = try made.platformWheel
        let tag = String(wheel.deletingPathExtension().lastPathComponent.split(separator: "-").last ?? "")
        let glibc = tag.split(separator: "_").dropFirst().prefix(2).joined(separator: ".")
        let depends = try CLIHarness.run("/usr/bin/env", ["dpkg-deb", "--field", try made.file(".deb").path, "Depends"]).stdout
        XCTAssertTrue(depends.contains("libc6 (>= \(glibc))"), "\(depends) for \(tag)")
        let needs = try CLIHarness.run("/usr/bin/env", ["readelf", "-V", "--wide", made.built.path]).stdout
        if needs.contains("GLIBC_ABI_DT_RELR") {
            XCTAssertGreaterThanOrEqual(Int(tag.split(separator: "_")[2]) ?? 0, 36, "packed relative relocations need glibc 2.36: \(tag)")
        }
        let tools = try Self.toolsVenv()
        let show = try CLIHarness.run(tools.appendingPathComponent("bin/python").path, ["-m", "auditwheel", "show", wheel.path], timeout: 120)
        XCTAssertEqual(show.status, 0, show.stderr)
        let verdict = show.stdout.replacingOccurrences(of: "\n", with: " ")
        XCTAssertTrue(verdict.contains("consistent with the following platform tag: \"\(tag)\""), verdict)
    }

    // MARK: - Each install, with no Swift on PATH

    func testTheWheelInAFreshVirtualenv() throws {
        let made = try artefacts()
        let place = try Place("wheel")
        defer { place.remove() }
        let venv = place.directory.appendingPathComponent("venv")
        let created = try place.run("python3", ["-m", "venv", venv.path], timeout: 120)
        guard created.status == 0 else { throw XCTSkip("python3 -m venv is unavailable (on Debian: apt-get install python3-venv): \(created.stderr)") }
        let pip = try place.run(venv.appendingPathComponent("bin/pip").path, ["install", "--no-index", try made.platformWheel.path], timeout: 120)
        XCTAssertEqual(pip.status, 0, pip.stdout + pip.stderr)
        let agent = venv.appendingPathComponent("bin/auth-agent").path
        try ReadmeExampleTests.assertRunItExample(agent, environment: place.environment, directory: place.directory)
        try assertClientExample(python: venv.appendingPathComponent("bin/python").path, in: place)
        try assertMCP([agent], in: place)
    }

    func testTheWheelThroughUvToolUvxAndPipx() throws {
        let made = try artefacts()
        let wheel = try made.platformWheel.path
        let tools = try Self.toolsVenv()
        let place = try Place("uv")
        defer { place.remove() }
        let uv = tools.appendingPathComponent("bin/uv").path, uvx = tools.appendingPathComponent("bin/uvx").path
        let installed = try place.run(uv, ["tool", "install", "--offline", wheel], timeout: 120)
        XCTAssertEqual(installed.status, 0, installed.stdout + installed.stderr)
        let version = try place.run(place.home.appendingPathComponent(".local/bin/auth-agent").path, ["--version"])
        XCTAssertEqual(version.stdout, "auth-agent \(made.version)\n", version.stderr)
        // What an MCP host's configuration runs: {"command": "uvx", "args": [..., "auth-agent", "mcp", URL]}.
        try ReadmeExampleTests.assertRunItExample(uvx, ["--offline", "--from", wheel, "auth-agent"], environment: place.environment,
                                                  directory: place.directory)
        try assertMCP([uvx, "--offline", "--from", wheel, "auth-agent"], in: place)

        let pipxPlace = try Place("pipx")
        defer { pipxPlace.remove() }
        let pipx = try pipxPlace.run(tools.appendingPathComponent("bin/python").path, ["-m", "pipx", "install", wheel], timeout: 180)
        XCTAssertEqual(pipx.status, 0, pipx.stdout + pipx.stderr)
        try ReadmeExampleTests.assertRunItExample(pipxPlace.home.appendingPathComponent(".local/bin/auth-agent").path,
                                                  environment: pipxPlace.environment, directory: pipxPlace.directory)
    }

    func testTheNpmTarballsInAnEmptyProject() throws {
        let made = try artefacts()
        let place = try Place("npm")
        defer { place.remove() }
        let project = place.directory.appendingPathComponent("project")
        try FileManager.default.createDirectory(at: project, withIntermediateDirectories: true)
        // --offline: no registry here; npm skips the optional platform packages it cannot fetch.
        let installed = try place.run("npm", ["install", "--offline", try made.file("auth-agent-linux-\(Self.nodeArch)-\(made.version).tgz").path,
                                              try made.file("auth-agent-\(made.version).tgz").path], directory: project, timeout: 180)
        XCTAssertEqual(installed.status, 0, installed.stdout + installed.stderr)
        try ReadmeExampleTests.assertRunItExample("/usr/bin/env", ["npx", "--offline", "auth-agent"], environment: place.environment,
                                                  directory: project)
        // The README's example imports the client alone (auth-agent-client); the package with the
        // agent is `auth-agent`, and the README says to import that name from it.
        let readme = try String(contentsOf: Self.root.appendingPathComponent("clients/node/README.md"), encoding: .utf8)
        XCTAssertTrue(readme.contains("from 'auth-agent'"), "the Node README names the import of the auth-agent package")
        let example = try XCTUnwrap(Self.firstBlock("js", of: "clients/node/README.md"), "the Node README has a js block")
            .replacingOccurrences(of: "from 'auth-agent-client'", with: "from 'auth-agent'")
        try example.write(to: project.appendingPathComponent("example.mjs"), atomically: true, encoding: .utf8)
        place.assertNoAgentOnPath()
        let run = try place.run("node", ["example.mjs"], directory: project, timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertTrue(run.stdout.contains("200 alice"), "the client found the bundled agent: \(run.stdout)\(run.stderr)")
        try assertMCP(["/usr/bin/env", "npx", "--offline", "--prefix", project.path, "auth-agent"], in: place)
    }

    /// Installed with dpkg into a root of its own (this machine's /usr is shared by others'
    /// tests), after apt has checked that this system meets its dependencies; with
    /// AUTH_AGENT_SYSTEM_INSTALL=1 (a throwaway CI machine), `apt-get install ./…deb` for real.
    func testTheDebianPackage() throws {
        let made = try artefacts()
        let deb = try made.file(".deb").path
        let place = try Place("deb")
        defer { place.remove() }
        if CLIHarness.which("apt-get") != nil {
            let simulated = try place.run("apt-get", ["install", "--simulate", deb], timeout: 120)
            XCTAssertEqual(simulated.status, 0, "apt finds the dependencies here: \(simulated.stdout)\(simulated.stderr)")
        }
        let root = place.directory.appendingPathComponent("root")
        for directory in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/log"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        FileManager.default.createFile(atPath: root.appendingPathComponent("var/lib/dpkg/status").path, contents: Data())
        // --force-depends: the private root has no libc6 package; apt checked the dependencies above.
        let dpkg = try place.run("dpkg", ["--root=\(root.path)", "--log=\(root.path)/var/log/dpkg.log", "--force-depends",
                                          "--force-not-root", "-i", deb], timeout: 120)
        XCTAssertEqual(dpkg.status, 0, dpkg.stdout + dpkg.stderr)
        for file in ["usr/bin/auth-agent", "usr/share/man/man1/auth-agent.1.gz", "usr/share/bash-completion/completions/auth-agent",
                     "usr/share/zsh/vendor-completions/_auth-agent", "usr/share/fish/vendor_completions.d/auth-agent.fish",
                     "usr/share/doc/auth-agent/copyright"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: root.appendingPathComponent(file).path), "the package installs /\(file)")
        }
        let agent = root.appendingPathComponent("usr/bin/auth-agent").path
        try ReadmeExampleTests.assertRunItExample(agent, environment: place.environment, directory: place.directory)
        try assertMCP([agent], in: place)

        // The man page is the agent's own, and bash completes from the installed file.
        let man = try place.run("/bin/sh", ["-c", "gzip -dc \(root.path)/usr/share/man/man1/auth-agent.1.gz"])
        XCTAssertTrue(man.stdout.hasPrefix(".TH AUTH-AGENT 1"), man.stdout.prefix(200) + man.stderr)
        let completion = try place.run("/bin/bash", ["-c", """
            source \(root.path)/usr/share/bash-completion/completions/auth-agent
            COMP_WORDS=(auth-agent log); COMP_CWORD=1; _auth_agent auth-agent log auth-agent; echo "${COMPREPLY[*]}"
            """])
        XCTAssertEqual(completion.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.sorted(),
                       ["login", "logout"], completion.stderr)

        try assertZshCompletes(root: root, in: place)
        try assertFishCompletes(root: root, in: place)

        guard ProcessInfo.processInfo.environment["AUTH_AGENT_SYSTEM_INSTALL"] == "1" else {
            print("the .deb was installed into \(root.path); AUTH_AGENT_SYSTEM_INSTALL=1 installs it into this system with apt-get")
            return
        }
        let apt = try place.run("apt-get", ["install", "-y", deb], timeout: 300)
        XCTAssertEqual(apt.status, 0, apt.stdout + apt.stderr)
        defer { _ = try? place.run("apt-get", ["remove", "-y", "auth-agent"], timeout: 300) }
        try ReadmeExampleTests.assertRunItExample("/usr/bin/auth-agent", environment: place.environment, directory: place.directory)
    }

    /// An interactive zsh (in a pseudo-terminal, zsh/zpty) with the package's vendor-completions on
    /// its fpath, as Debian's zsh has it: the first Tab after `auth-agent log` lists login and logout
    /// (the autoloaded file must complete on its first call, not only define the function).
    private func assertZshCompletes(root: URL, in place: Place) throws {
        guard CLIHarness.which("zsh") != nil else {
            print("zsh is not installed (apt-get install zsh): the zsh completion file is installed but not tried")
            return
        }
        let script = """
            zmodload zsh/zpty
            zpty z 'zsh -f -i'
            zpty -w z "PS1='> '; fpath=(\(root.path)/usr/share/zsh/vendor-completions \\$fpath); autoload -U compinit; compinit -u -D"
            zpty -w -n z $'auth-agent log\t'
            sleep 2
            out=""
            while zpty -r -t z line; do out+="$line"; done
            print -r -- "$out"
            zpty -d z
            """
        let run = try place.run("zsh", ["-f", "-c", script], timeout: 30)
        XCTAssertTrue(run.stdout.contains("login") && run.stdout.contains("logout"),
                      "zsh lists login and logout: \(run.stdout.suffix(400))\(run.stderr)")
    }

    /// fish with the package's vendor_completions.d on its completion path, as Debian's fish has it.
    private func assertFishCompletes(root: URL, in place: Place) throws {
        guard CLIHarness.which("fish") != nil else {
            print("fish is not installed (apt-get install fish): the fish completion file is installed but not tried")
            return
        }
        let bin = root.appendingPathComponent("usr/bin").path
        let run = try place.run("/usr/bin/env", ["PATH=\(bin):\(Place.path)", "fish", "-c", """
            set -p fish_complete_path \(root.path)/usr/share/fish/vendor_completions.d; complete -C 'auth-agent log'
            """], timeout: 30)
        XCTAssertEqual(run.stdout.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" }.sorted(),
                       ["login", "logout"], run.stdout + run.stderr)
    }

    // MARK: - What each install runs

    /// The Python client README's first example, with no AUTH_AGENT_BIN and no agent on PATH:
    /// only the bundled one can answer.
    private func assertClientExample(python: String, in place: Place) throws {
        let example = try XCTUnwrap(Self.firstBlock("python", of: "clients/python/README.md"), "the Python README has a python block")
        place.assertNoAgentOnPath()
        let script = place.directory.appendingPathComponent("example.py")
        try example.write(to: script, atomically: true, encoding: .utf8)
        let run = try place.run(python, [script.path], timeout: 60)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr)
        XCTAssertEqual(run.stdout.split(separator: "\n"), ["200 Alice", "Logged out of demo (logout)"], run.stderr)
    }

    /// `COMMAND… mcp ISSUER/mcp` started by the MCP Python SDK (Tests/MCP/whoami_host.py) against the
    /// dev issuer the installed agent runs, alice logged in first through the same install.
    private func assertMCP(_ command: [String], in place: Place) throws {
        let sdk = try Self.sdkVenv()
        let issuer = try InstalledIssuer(command, place: place)
        defer { issuer.stop() }
        let config = place.directory.appendingPathComponent("mcp-config.json")
        let text = """
            {"store": {"kind": "file", "path": "\(place.directory.path)/mcp-store"}, "providers": [{"id": "dev", "displayName": "Dev issuer",
             "flow": "password", "origins": ["\(issuer.url)"], "tokenEndpoint": "\(issuer.url)/token", "clientId": "cli", "scopes": ["mcp"]}]}
            """
        try text.write(to: config, atomically: true, encoding: .utf8)
        let login = #"{"jsonrpc":"2.0","id":1,"method":"login","params":{"provider":"dev","credentials":{"username":"alice","password":"wonderland"}}}"#
        let logged = try place.run(command[0], Array(command.dropFirst()) + ["--config", config.path], stdin: login + "\n", timeout: 60)
        XCTAssertTrue(logged.stdout.contains("\"result\""), logged.stdout + logged.stderr)
        let host = Self.root.appendingPathComponent("Tests/MCP/whoami_host.py").path
        let run = try place.run(sdk.appendingPathComponent("bin/python").path,
                                [host, "--"] + command + ["mcp", issuer.url + "/mcp", "--config", config.path, "--resource", issuer.url + "/mcp"],
                                timeout: 90)
        XCTAssertEqual(run.status, 0, run.stdout + run.stderr.suffix(3000))
        let seen = try JSONParser.parse(String(run.stdout.split(separator: "\n").last ?? ""))
        XCTAssertEqual(seen["tools"], ["whoami"], "\(seen)")
        XCTAssertEqual(seen["whoami"], "alice", "\(seen)")
    }

    /// `auth-agent dev-issuer` from the install itself; it serves until its stdin closes.
    private final class InstalledIssuer {
        let process = Process()
        let input = Pipe()
        let url: String

        init(_ command: [String], place: Place) throws {
            process.executableURL = URL(fileURLWithPath: command[0])
            process.arguments = Array(command.dropFirst()) + ["dev-issuer"]
            process.environment = place.environment
            process.currentDirectoryURL = place.directory
            let output = Pipe()
            process.standardInput = input
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let line = output.fileHandleForReading.availableData
            let issuer = try? JSONParser.parse(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            guard let url = issuer?["issuer"]?.stringValue else {
                process.terminate()
                throw Failure("\(command.joined(separator: " ")) dev-issuer printed \(String(decoding: line, as: UTF8.self))")
            }
            self.url = url
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { process.terminate() }
        }
    }

    // MARK: - Places and tools

    /// A fresh directory with its own HOME, state and caches, and a PATH without Swift: whatever
    /// answers was installed here.
    struct Place {
        let directory: URL
        var home: URL { directory.appendingPathComponent("home") }

        init(_ name: String) throws {
            directory = try TemporaryDirectory(prefix: "auth-agent-install-\(name)").url
            try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        }

        static let path: String = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .filter { !FileManager.default.isExecutableFile(atPath: "\($0)/swift") }.joined(separator: ":")

        /// Fails when an `auth-agent` on this PATH could answer in the bundled one's stead.
        func assertNoAgentOnPath(file: StaticString = #filePath, line: UInt = #line) {
            let found = Self.path.split(separator: ":").first { FileManager.default.isExecutableFile(atPath: "\($0)/auth-agent") }
            XCTAssertNil(found, "an auth-agent in \(found ?? "") would hide whether the client finds its bundled agent", file: file, line: line)
        }

        var environment: [String: String] {
            ["PATH": Self.path, "HOME": home.path, "AUTH_AGENT_BIN": "", "AUTH_AGENT_CONFIG": "",
             "XDG_STATE_HOME": directory.appendingPathComponent("state").path, "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
             "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1",
             "npm_config_cache": directory.appendingPathComponent("npm-cache").path, "npm_config_audit": "false", "npm_config_fund": "false",
             "npm_config_update_notifier": "false", "PIPX_HOME": directory.appendingPathComponent("pipx").path,
             "PIPX_BIN_DIR": home.appendingPathComponent(".local/bin").path, "UV_TOOL_BIN_DIR": home.appendingPathComponent(".local/bin").path,
             "UV_TOOL_DIR": directory.appendingPathComponent("uv-tools").path, "UV_CACHE_DIR": directory.appendingPathComponent("uv-cache").path,
             "UV_PYTHON_DOWNLOADS": "never"]
        }

        /// `tool` from this place's PATH (or an absolute path), in this place's environment.
        func run(_ tool: String, _ arguments: [String], stdin: String = "", directory: URL? = nil, timeout: Double = 30) throws -> CLIHarness.Finished {
            XCTAssertNil(Self.path.split(separator: ":").first { FileManager.default.isExecutableFile(atPath: "\($0)/swift") }, "no swift on PATH")
            let (executable, leading) = tool.hasPrefix("/") ? (tool, []) : ("/usr/bin/env", [tool])
            return try CLIHarness.run(executable, leading + arguments, stdin: stdin, environment: environment,
                                      directory: directory ?? self.directory, timeout: timeout)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    /// auditwheel, uv and pipx from PyPI (Tests/Packaging/requirements.txt), cached while that file is unchanged.
    /// The virtualenv is built beside its path and renamed into place, so its scripts' `#!` lines
    /// name the wrong directory: run them as `bin/python -m TOOL` (uv and uvx are programs).
    private static func toolsVenv() throws -> URL {
        try venv(ProcessInfo.processInfo.environment["AUTH_AGENT_PACKAGING_VENV"] ?? "/tmp/auth-agent-packaging-venv",
                 requirements: "Tests/Packaging/requirements.txt")
    }

    /// The MCP Python SDK, in the virtualenv the FastMCP tests share (Tests/MCP/requirements.txt).
    private static func sdkVenv() throws -> URL {
        try venv(ProcessInfo.processInfo.environment["FASTMCP_VENV"] ?? "/tmp/auth-agent-fastmcp-venv", requirements: "Tests/MCP/requirements.txt")
    }

    private static func venv(_ path: String, requirements: String) throws -> URL {
        let script = "source Tests/Interop/server-lib.sh; log() { echo \"$*\" >&2; }; ensure_venv python3 \"$1\" \"$2\""
        let made = try CLIHarness.run("/bin/bash", ["-c", script, "venv", path, requirements], directory: root, timeout: 600)
        switch made.status {
        case 0: return URL(fileURLWithPath: path)
        case 3: throw XCTSkip("python3 -m venv is unavailable (on Debian: apt-get install python3-venv)")
        default: throw XCTSkip("installing \(requirements) from PyPI failed (no PyPI?): \(made.stderr.suffix(500))")
        }
    }

    /// The first fenced block in `language` of a README under the checkout.
    private static func firstBlock(_ language: String, of readme: String) throws -> String? {
        let text = try String(contentsOf: root.appendingPathComponent(readme), encoding: .utf8)
        guard let open = text.range(of: "```\(language)\n"),
              let close = text.range(of: "\n```", range: open.upperBound..<text.endIndex) else { return nil }
        return String(text[open.upperBound..<close.lowerBound]) + "\n"
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
