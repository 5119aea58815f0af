import AuthCore
import DevIssuer
import Foundation
import XCTest
@testable import auth_agent

/// Issue 20, item 4 and 5, the pure parts: global options anywhere, help per command, the man page
/// and the completions from the same table, and the new commands' options.
final class CommandLineParsingTests: XCTestCase {
    func testGlobalOptionsGoAnywhere() throws {
        let before = try Arguments.parse(["--config", "/c.json", "--log-level=debug", "token", "corp"])
        guard case .tool(let token) = before.command else { return XCTFail("\(before.command)") }
        XCTAssertEqual(token.action, .token(provider: "corp", json: false))
        XCTAssertEqual(token.configPath, "/c.json")
        XCTAssertEqual(token.logLevel, .debug)
        let demo = try Arguments.parse(["--log-level", "debug", "demo"])
        XCTAssertEqual(demo.command, .demo)
        XCTAssertEqual(demo.logLevel, .debug)
        XCTAssertEqual(try Arguments.parse(["--config", "/c.json", "serve"]).configPath, "/c.json")
        XCTAssertEqual(try Arguments.parse(["--version"]).command, .version)
        XCTAssertEqual(try Arguments.parse(["--config", "/c", "--version", "status"]).command, .version)
        XCTAssertThrowsError(try Arguments.parse(["demo", "serve"]))
    }

    func testHelpTopics() throws {
        XCTAssertEqual(try Arguments.parse(["help"]).command, .help(topic: nil, man: false))
        XCTAssertEqual(try Arguments.parse(["--help"]).command, .help(topic: nil, man: false))
        XCTAssertEqual(try Arguments.parse(["help", "token"]).command, .help(topic: "token", man: false))
        XCTAssertEqual(try Arguments.parse(["token", "--help"]).command, .help(topic: "token", man: false))
        XCTAssertEqual(try Arguments.parse(["--log-level", "debug", "fetch", "-h"]).command, .help(topic: "fetch", man: false))
        XCTAssertEqual(try Arguments.parse(["config", "add", "--help"]).command, .help(topic: "config add", man: false))
        XCTAssertEqual(try Arguments.parse(["help", "config", "add"]).command, .help(topic: "config add", man: false))
        XCTAssertEqual(try Arguments.parse(["demo", "--help"]).command, .help(topic: "demo", man: false))
        XCTAssertEqual(try Arguments.parse(["help", "--man"]).command, .help(topic: nil, man: true))
        XCTAssertThrowsError(try Arguments.parse(["help", "nosuch"]))

        let token = try XCTUnwrap(CommandHelp.usage(of: "token"))
        XCTAssertTrue(token.hasPrefix("Usage: auth-agent token PROVIDER"), token)
        XCTAssertTrue(token.contains("--min-valid SECONDS") && token.contains("--account ID"), token)
        XCTAssertFalse(token.contains("--data-binary") || token.contains("--password-stdin"), "only token's options: \(token)")
        XCTAssertEqual(CommandHelp.lookup("config").map(\.name), ["config path", "config check", "config add", "config set", "config remove"])

        // demo and dev-issuer in a section of their own, after everything a user needs.
        let usage = CommandHelp.usage
        let section = try XCTUnwrap(usage.range(of: "Trying it and developing against it:\n"))
        XCTAssertTrue(usage[section.upperBound...].hasPrefix("  auth-agent demo\n"), usage)
        XCTAssertTrue(usage[section.upperBound...].contains("  auth-agent dev-issuer [--port N]\n"))
        XCTAssertFalse(usage[..<section.lowerBound].contains("auth-agent demo\n"))
        XCTAssertTrue(usage.contains("Global options (anywhere on the line):"))
        XCTAssertFalse(usage.split(separator: "\n").contains { $0.count > 100 && !$0.contains("auth-agent ") }, "wrapped")
    }

    /// The man page says what --help says: every command, option and text, roff-escaped.
    func testManPageComesFromTheHelpText() {
        let man = CommandHelp.manPage
        XCTAssertTrue(man.hasPrefix(".TH AUTH-AGENT 1 "))
        for c in CommandHelp.commands {
            XCTAssertTrue(man.contains(".B \(CommandHelp.escape(c.usageLine))\n\(CommandHelp.escape(c.summary))\n"), c.name)
            for o in c.options { XCTAssertTrue(man.contains(".B \(CommandHelp.escape(o.flag))\n\(CommandHelp.escape(o.text))\n"), o.flag) }
        }
        XCTAssertFalse(man.split(separator: "\n").contains { $0.hasPrefix(".") && !$0.hasPrefix(".TH") && !$0.hasPrefix(".SH") && !$0.hasPrefix(".B")
            && ![".TP", ".RS", ".RE"].contains(String($0)) }, "no text line read as a roff request")
        XCTAssertEqual(CommandHelp.escape(".x -y \\z"), "\\&.x \\-y \\ez")
        // `man -l` in a C locale (a fresh account, cron, `env -i`) renders with groff's ASCII
        // device, which has no glyph for U+2026 and warned "can't find special character 'u2026'".
        XCTAssertFalse(man.contains("…"), "no ellipsis character in the roff")
        XCTAssertEqual(CommandHelp.escape("URL…"), "URL...")
    }

    /// A mistyped command gets the command it was probably meant to be, as git and gh answer.
    func testMistypedCommandGetsASuggestion() throws {
        for (argv, message) in [(["logn", "corp"], "unknown command 'logn'; did you mean 'login'?"),
                                (["--config", "/c.json", "stauts"], "unknown command 'stauts'; did you mean 'status'?"),
                                (["help", "tokne"], "no command 'tokne'; did you mean 'token'?"),
                                (["frobnicate"], "unknown command 'frobnicate'"),
                                (["serve", "extra"], "unknown argument 'extra'")] {
            XCTAssertThrowsError(try Arguments.parse(argv), "\(argv)") { XCTAssertEqual("\($0)", message) }
        }
        // Issue 31 item 4: options, from the options `help COMMAND` lists, and provider names (the core's words).
        for (argv, message) in [(["token", "corp", "--jsn"], "'token' does not take --jsn; did you mean --json?"),
                                (["fetch", "--includ", "https://x/"], "'fetch' does not take --includ; did you mean --include?"),
                                (["login", "p", "--devise"], "'login' does not take --devise; did you mean --device?"),
                                (["status", "--frobnicate"], "'status' does not take --frobnicate")] {
            XCTAssertThrowsError(try ToolCommand.parse(argv), "\(argv)") { XCTAssertEqual("\($0)", message) }
        }
        let mcp = try McpCommand.parse(["https://mcp.example/", "--header", "X-Tenant:acme", "--header=X-Trace: 1", "--ignore-tool", "delete*"])
        XCTAssertEqual(mcp.headers, [.init(name: "X-Tenant", value: "acme"), .init(name: "X-Trace", value: "1")])
        XCTAssertEqual(mcp.ignoredTools, ["delete*"])
        for (argv, problem) in [(["https://x/", "--header", "Authorization: Bearer t"], "the agent signs every request"),
                                (["https://x/", "--header", "Mcp-Session-Id: s"], "set by the bridge"),
                                (["https://x/", "--header", "no colon"], "wants 'Name: value'"),
                                (["http://10.0.0.1/mcp"], "--allow-http")] {
            XCTAssertThrowsError(try McpCommand.parse(argv), "\(argv)") { XCTAssertTrue("\($0)".contains(problem), "\($0)") }
        }
        XCTAssertTrue(try McpCommand.parse(["http://10.0.0.1/mcp", "--allow-http"]).allowHTTP)
        XCTAssertEqual(try McpCommand.parse(["https://x/", "--protocol-version", "2026-07-28"]).protocolVersion, "2026-07-28")
        XCTAssertEqual(try McpCommand.parse(["https://x/", "--callback-port", "33418"]).callbackPort, 33418)
        XCTAssertThrowsError(try McpCommand.parse(["https://x/", "--callback-port", "0"]))
        XCTAssertNil(try McpCommand.parse(["https://x/"]).protocolVersion, "the host's own revision")
        XCTAssertEqual(try McpCommand.parse(["https://x/"]).transport, .httpFirst, "mcp-remote's default")
        XCTAssertEqual(try McpCommand.parse(["https://x/", "--transport", "sse-only"]).transport, .sseOnly)
        XCTAssertEqual(try McpCommand.parse(["https://x/", "--transport=sse-first"]).transport, .sseFirst)
        XCTAssertThrowsError(try McpCommand.parse(["https://x/", "--transport", "sse"])) {
            XCTAssertEqual("\($0)", "--transport must be one of http-only, sse-only, http-first, sse-first, got 'sse'")
        }
        XCTAssertThrowsError(try McpCommand.parse(["https://x/", "--protocol-version=2026-01-01"])) {
            XCTAssertEqual("\($0)", "--protocol-version must be one of 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28, got '2026-01-01'")
        }
        XCTAssertThrowsError(try McpCommand.parse(["--devce", "https://mcp.example/"])) {
            XCTAssertEqual("\($0)", "'mcp' does not take --devce; did you mean --device?")
        }
        XCTAssertEqual(AuthError.unknownProvider("corpp", .notConfigured(known: ["corp", "github"])).message,
                       #"No provider "corpp" is configured; known: corp, github. Did you mean "corp"?"#)
        XCTAssertEqual(AuthError.unknownProvider("zzz", .notConfigured(known: ["corp", "github"])).message,
                       #"No provider "zzz" is configured; known: corp, github."#)
    }

    /// A newcomer writing a configuration against `auth-agent dev-issuer` learns its clients and
    /// users from the help, as `demo` prints its users (they were in no help text nor the README).
    func testDevIssuerHelpNamesItsClientsAndUsers() throws {
        let summary = try XCTUnwrap(CommandHelp.lookup("dev-issuer").first).summary
        let defaults = DevIssuerOptions()
        for (user, password) in defaults.users { XCTAssertTrue(summary.contains("\(user)/\(password)"), summary) }
        for (client, secret) in defaults.clients where client != "demo" {
            XCTAssertTrue(summary.contains(secret.map { "\(client) (secret \($0))" } ?? "\(client) (public)"), summary)
        }
    }

    func testNewCommands() throws {
        XCTAssertEqual(try ToolCommand.parse(["refresh", "corp"]).action, .refresh(provider: "corp"))
        XCTAssertEqual(try ToolCommand.parse(["refresh", "corp", "--account", "bob"]).account, "bob")
        let minValid = try ToolCommand.parse(["token", "corp", "--min-valid", "300"])
        XCTAssertEqual(minValid.minValid, 300)
        XCTAssertEqual(minValid.action, .token(provider: "corp", json: false))
        XCTAssertEqual(try ToolCommand.parse(["config", "path"]).action, .config(.path))
        XCTAssertEqual(try ToolCommand.parse(["config", "check"]).action, .config(.check))
        XCTAssertEqual(try ToolCommand.parse(["config", "remove", "corp"]).action, .config(.remove(id: "corp")))
        let add = try ToolCommand.parse(["config", "add", "corp", "--issuer", "https://sso.example.com", "--client-id=cli", "--origin", "https://a.example",
                                         "--origin", "https://b.example", "--flow", "deviceCode", "--scope", "openid", "--client-secret-stdin"])
        XCTAssertEqual(add.action, .config(.add(.init(id: "corp", issuer: "https://sso.example.com", clientId: "cli", origins: ["https://a.example", "https://b.example"],
                                                      flows: ["deviceCode"], scopes: ["openid"], clientSecretStdin: true))))
        XCTAssertEqual(try ToolCommand.parse(["git-credential", "configure"]).action, .gitConfigure(url: nil))
        XCTAssertEqual(try ToolCommand.parse(["git-credential", "configure", "https://git.example.com"]).action, .gitConfigure(url: "https://git.example.com"))
        XCTAssertEqual(try ToolCommand.parse(["git-credential", "get"]).action, .gitCredential(operation: "get"))
        for bad in [["token", "p", "--min-valid", "-1"], ["token", "p", "--min-valid", "soon"], ["header", "u", "--min-valid", "5"], ["config"], ["config", "bogus"],
                    ["config", "path", "x"], ["config", "remove"], ["config", "add", "p", "--client-id", "c", "--origin", "https://o"],
                    ["config", "add", "p", "--issuer", "https://i", "--client-id", "c"], ["config", "check", "--issuer", "https://i"],
                    ["git-credential", "configure", "a", "b"], ["refresh"], ["completion", "tcsh"]] {
            XCTAssertThrowsError(try Arguments.parse(bad), "\(bad)")
        }
        XCTAssertEqual(try Arguments.parse(["completion", "zsh"]).command, .completion(shell: "zsh"))
    }

    /// The bash completion, run by bash: commands, a command's options, config's subcommands and
    /// the provider ids (`auth-agent __complete-providers`, stubbed here).
    func testBashCompletion() throws {
        guard FileManager.default.isExecutableFile(atPath: "/bin/bash") else { throw XCTSkip("no bash") }
        func complete(_ words: [String]) throws -> [String] {
            let line = words.map { "'\($0)'" }.joined(separator: " ")
            let script = Completion.bash + """
                auth-agent() { [ "$1" = __complete-providers ] && if [ "$2" = --learned ]; then printf 'api.example\\n'; else printf 'corp\\ndev\\napi.example\\n'; fi; }
                COMP_WORDS=(\(line)); COMP_CWORD=\(words.count - 1)
                _auth_agent auth-agent "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; printf '%s\\n' "${COMPREPLY[@]}"
                """
            let r = try CLIHarness.run("/bin/bash", ["-c", script])
            XCTAssertEqual(r.status, 0, r.stderr)
            return r.stdout.split(separator: "\n").map(String.init).sorted()
        }
        XCTAssertEqual(try complete(["auth-agent", "to"]), ["token"])
        XCTAssertEqual(try complete(["auth-agent", "de"]), ["demo", "dev-issuer"])
        XCTAssertEqual(try complete(["auth-agent", "token", ""]), ["api.example", "corp", "dev"])
        // Issue 31 item 4: `forget` completes only what it takes, the learned APIs.
        XCTAssertEqual(try complete(["auth-agent", "forget", ""]), ["api.example"])
        XCTAssertEqual(try complete(["auth-agent", "--config", "/c.json", "logout", "c"]), ["corp"])
        XCTAssertEqual(try complete(["auth-agent", "token", "--m"]), ["--min-valid"])
        XCTAssertEqual(try complete(["auth-agent", "config", ""]), ["add", "check", "path", "remove", "set"])
        XCTAssertEqual(try complete(["auth-agent", "config", "remove", ""]), ["api.example", "corp", "dev"])
        XCTAssertEqual(try complete(["auth-agent", "config", "add", "x", "--is"]), ["--issuer"])
        XCTAssertEqual(try complete(["auth-agent", "token", "corp", ""]), [], "one operand")
        XCTAssertEqual(try complete(["auth-agent", "--log-level", "d"]), ["debug"])
        XCTAssertEqual(try complete(["auth-agent", "mcp", "https://x/", "--transport", "sse"]), ["sse-first", "sse-only"])
        XCTAssertEqual(try complete(["auth-agent", "mcp", "--transport", "sse-only", "--tr"]), ["--transport"], "its value is no operand")
        XCTAssertEqual(try complete(["auth-agent", "git-credential", ""]), ["configure", "erase", "get", "store"])
        // `help <Tab>` completes the commands, as gh's does.
        XCTAssertEqual(try complete(["auth-agent", "help", "lo"]), ["login", "logout"])
        XCTAssertEqual(try complete(["auth-agent", "help", "con"]), ["config", "connect"])
        XCTAssertTrue(Completion.script("zsh")?.contains("bashcompinit") ?? false)
        let fish = try XCTUnwrap(Completion.script("fish"))
        XCTAssertTrue(fish.contains("complete -c auth-agent -n '__fish_seen_subcommand_from token' -l min-valid"), fish)
        XCTAssertTrue(fish.contains("(auth-agent __complete-providers 2>/dev/null)"))
        XCTAssertTrue(fish.contains("-n '__fish_seen_subcommand_from mcp' -l transport -x -a 'http-only sse-only http-first sse-first'"), fish)
        XCTAssertTrue(fish.contains("-n '__fish_seen_subcommand_from forget' -a '(auth-agent __complete-providers --learned 2>/dev/null)'"), fish)
    }

    /// zsh runs the same function through bashcompinit, which passes 1-based arrays: the script
    /// must count words, not index them. zsh filters the candidates by the prefix itself.
    func testZshAndFishCompletion() throws {
        let stub = "auth-agent() { [ \"$1\" = __complete-providers ] && printf 'corp\\ndev\\n'; }\n"
        if let zsh = CLIHarness.which("zsh") {
            let script = Completion.script("zsh")! + stub + """
                t() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _auth_agent auth-agent "${@[-1]}" "${@[-2]}"; print -r -- "${(j:,:)COMPREPLY}"; }
                t auth-agent token ''; t auth-agent config ''; t auth-agent --config /c config remove ''; t auth-agent token corp ''
                """
            let r = try CLIHarness.run(zsh, ["-f", "-c", script], environment: ["HOME": FileManager.default.temporaryDirectory.path])
            XCTAssertEqual(r.stdout, "corp,dev\npath,check,add,set,remove\ncorp,dev\n\n", r.stderr)
        }
        if let fish = CLIHarness.which("fish") {
            let script = "function auth-agent; printf 'corp\\ndev\\n'; end\n" + Completion.script("fish")! + """
                complete -C 'auth-agent token '; complete -C 'auth-agent token --min'; complete -C 'auth-agent config rem'; complete -C 'auth-agent help logo'
                """
            let r = try CLIHarness.run(fish, ["--no-config", "-c", script])
            let lines = r.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) }
            XCTAssertEqual(lines, ["corp", "dev", "--min-valid", "remove", "logout"], r.stdout + r.stderr)
        }
        if CLIHarness.which("zsh") == nil || CLIHarness.which("fish") == nil { throw XCTSkip("zsh or fish is not installed: only the shells present were tried") }
    }

    func testGitHelperLine() {
        XCTAssertEqual(GitConfigure.helperLine(executable: nil, path: nil), "!auth-agent git-credential")
        XCTAssertEqual(GitConfigure.helperLine(executable: "/opt/x/auth-agent", path: "/nonexistent"), "/opt/x/auth-agent git-credential")
        XCTAssertEqual(GitConfigure.helperLine(executable: "/opt/my tools/auth-agent", path: ""), "!'/opt/my tools/auth-agent' git-credential")
    }
}
