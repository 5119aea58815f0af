#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import JSONRPC
import Logging

/// `auth-agent git-credential configure [URL]`: git's helper line for URL, or for every https
/// origin of every provider, in the user's global git configuration — once, like `gh auth setup-git`,
/// so running it again changes nothing.
enum GitConfigure {
    static func run(url: String?, configPath: String?) throws(ToolFailure) -> String {
        var urls: [String] = []
        if let url {
            guard Origin(url: url) != nil else { throw ToolFailure(.usage, "git-credential configure needs an http or https URL, got '\(url)'") }
            urls = [url]
        } else {
            var arguments = Arguments()
            arguments.configPath = configPath
            let (config, path) = Agent.loadConfig(arguments, logger: Logger(level: .warn), hint: false)
            for provider in config.providers {
                urls += provider.origins.filter { $0.scheme == "https" }.map(\.description)
            }
            guard !urls.isEmpty else {
                throw ToolFailure(.usage, config.providers.isEmpty ? ConfigCommand.noConfiguration(path)
                                                                          : "no provider has an https origin; name the URL: auth-agent git-credential configure URL")
            }
        }
        let helper = helperLine()
        for url in urls {
            let key = "credential.\(url).helper"
            let present = try git(["config", "--global", "--get-all", key])
            if present.status == 0, present.output.split(separator: "\n").contains(Substring(helper)) {
                Logger.stderrSink("git already uses auth-agent for \(url).")
                continue
            }
            let added = try git(["config", "--global", "--add", key, helper])
            guard added.status == 0 else { throw ToolFailure(.failed, "git config --global --add \(key) failed (exit \(added.status))") }
            Logger.stderrSink("git uses auth-agent for \(url) now: \(key) = \(helper)")
        }
        return ""
    }

    /// `!auth-agent git-credential` when `auth-agent` on the PATH is this program; else its
    /// absolute path. A bare `auth-agent git-credential` would make git run `git credential-auth-agent`.
    static func helperLine(executable: String? = currentExecutable(), path: String? = ProcessEnvironment.current()["PATH"]) -> String {
        guard let executable else { return "!auth-agent git-credential" }
        for directory in (path ?? "").split(separator: ":") where realPath("\(directory)/auth-agent") == executable {
            return "!auth-agent git-credential"
        }
        let plain = executable.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || "/._-+".utf8.contains(c)
        }
        return plain ? "\(executable) git-credential" : "!'\(executable.replacing("'", with: "'\\''"))' git-credential"
    }

    /// This program's resolved path (Linux: /proc/self/exe; elsewhere argv[0] resolved).
    static func currentExecutable() -> String? {
        #if os(Linux)
        return realPath("/proc/self/exe")
        #else
        return realPath(CommandLine.arguments[0])
        #endif
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Runs git with the user's environment; its stdout collected, its stderr passed through.
    private static func git(_ arguments: [String]) throws(ToolFailure) -> (status: Int32, output: String) {
        var pipe: [Int32] = [0, 0]
        guard makePipe(&pipe) else { throw ToolFailure(.failed, "cannot run git: \(String(cString: strerror(errno)))") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipe[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipe[0])
        posix_spawn_file_actions_addclose(&actions, pipe[1])
        let argv: [UnsafeMutablePointer<CChar>?] = (["git"] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, "git", &actions, nil, argv, environ)
        close(pipe[1])
        defer { close(pipe[0]) }
        guard spawned == 0 else { throw ToolFailure(.failed, "cannot run git: \(String(cString: strerror(spawned)))") }
        let output = StandardStream.readAll(pipe[0]) ?? []
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (code, String(decoding: output, as: UTF8.self))
    }

    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        fds.withUnsafeMutableBufferPointer { pipe($0.baseAddress!) == 0 }
    }
}
