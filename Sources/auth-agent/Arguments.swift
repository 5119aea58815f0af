import AuthCore
import JSONRPC
import Logging

/// The command line, parsed by hand (no dependencies): a subcommand and options.
struct Arguments {
    enum Command: Equatable {
        case serve, demo, devIssuer, version, tool(ToolCommand)
        /// `help [COMMAND] [--man]`, `--help`, `COMMAND --help`.
        case help(topic: String?, man: Bool)
        /// `completion bash|zsh|fish`.
        case completion(shell: String)
        /// `__complete-providers [--learned]`: the provider ids the agent knows (configured and
        /// learned; only the learned ones, which `forget` takes), one a line, for the completion scripts.
        case completeProviders(learnedOnly: Bool)
        /// `mcp URL`: the stdio ⇄ Streamable HTTP bridge.
        case mcp(McpCommand.Options)
        /// `connect`: relay stdin/stdout to the socket agent, or serve on them when none answers.
        case connect
    }

    var command: Command = .serve
    var configPath: String?
    var maxMessageBytes = 1 << 20
    var logLevel: Logger.Level = .warn
    var port: UInt16 = 0
    /// `serve --socket`: listen on a Unix-domain socket instead of stdin/stdout.
    var socket: SocketOptions?
    /// `serve --stop`: end the socket agent `AUTH_AGENT_SOCK` names.
    var stop = false

    static let version = CommandHelp.version

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ argv: [String]) throws -> Arguments {
        var a = Arguments()
        // Global options may come before the command word: find it, skipping their values.
        var at = 0
        while at < argv.count, argv[at].hasPrefix("-") {
            at += valueFlags.contains(argv[at]) ? 2 : 1
        }
        let leading = Array(argv[..<min(at, argv.count)])
        let word = at < argv.count ? argv[at] : nil
        let rest = at < argv.count ? Array(argv[(at + 1)...]) : []
        switch word {
        case let name? where ToolCommand.names.contains(name):
            // The one-shot subcommands (login, token, git-credential, …) parse their own options,
            // the global ones included wherever they stand.
            if leading.contains("--version") { a.command = .version; return a }
            let tool = try ToolCommand.parse([name] + rest + leading)
            a.command = tool.help ? .help(topic: helpTopic(name, rest), man: false) : .tool(tool)
            return a
        case "mcp"?:
            let options = try McpCommand.parse(rest + leading)
            a.command = options.help ? .help(topic: "mcp", man: false) : .mcp(options)
            return a
        case "help"?:
            let words = rest.filter { !$0.hasPrefix("-") }
            for flag in rest where flag.hasPrefix("-") && flag != "--man" && flag != "--help" {
                throw UsageError(description: "'help' does not take \(flag)")
            }
            let topic = words.isEmpty ? nil : words.joined(separator: " ")
            if let topic, CommandHelp.lookup(topic).isEmpty { throw unknownCommand(topic, "no command", among: CommandHelp.commands.map(\.name)) }
            a.command = .help(topic: topic, man: rest.contains("--man"))
            return a
        case "completion"?:
            if rest.contains("--help") || rest.contains("-h") { a.command = .help(topic: "completion", man: false); return a }
            guard rest.count == 1, Completion.shells.contains(rest[0]) else {
                throw UsageError(description: "'completion' needs one shell: \(Completion.shells.joined(separator: ", "))")
            }
            a.command = .completion(shell: rest[0])
            return a
        case "__complete-providers"?:
            a.command = .completeProviders(learnedOnly: rest.contains("--learned"))
            let tool = try ToolCommand.parse(["status"] + rest.filter { $0 != "--learned" } + leading)
            a.configPath = tool.configPath
            return a
        default:
            break
        }
        var i = 0
        func value(_ flag: String) throws -> String {
            i += 1
            guard i < argv.count else { throw UsageError(description: "\(flag) needs a value") }
            return argv[i]
        }
        var sawCommand = false
        var socketFlags = SocketFlags()
        while i < argv.count {
            let arg = argv[i]
            var flag = arg
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                flag = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            func take() throws -> String {
                if let inline { return inline }
                return try value(flag)
            }
            switch flag {
            case "-h", "--help": a.command = .help(topic: sawCommand ? word : nil, man: false)
            case "--version": a.command = .version
            case "--config": a.configPath = try take()
            case "--max-message-bytes":
                let v = try take()
                guard let n = Int(v), n >= 64, n <= 1 << 30 else {
                    throw UsageError(description: "--max-message-bytes must be a whole number from 64 to 1073741824, got '\(v)'")
                }
                a.maxMessageBytes = n
            case "--log-level":
                let v = try take()
                guard let level = Logger.Level(name: v) else {
                    throw UsageError(description: "--log-level must be one of error, warn, info, debug, got '\(v)'")
                }
                a.logLevel = level
            case "--socket":
                // The path is optional: `--socket` alone is the default path.
                var path = inline
                if path == nil, i + 1 < argv.count, !argv[i + 1].hasPrefix("-") {
                    i += 1
                    path = argv[i]
                }
                a.socket = a.socket ?? SocketOptions()
                a.socket!.path = path
            case "--daemon": socketFlags.daemon = true
            case "--stop": a.stop = true
            case "--max-connections": socketFlags.maxConnections = try SocketFlags.connections(flag, take())
            case "--forward-max-connections": socketFlags.forwardMaxConnections = try SocketFlags.connections(flag, take())
            case "--forward-socket": socketFlags.forwardPath = try take()
            case "--forward-providers":
                let providers = try take().split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
                guard !providers.contains(where: \.isEmpty) else { throw UsageError(description: "--forward-providers takes provider ids separated by commas") }
                socketFlags.forwardProviders = providers
            case "--port":
                let v = try take()
                guard let p = UInt16(v) else { throw UsageError(description: "--port must be a number from 0 to 65535, got '\(v)'") }
                a.port = p
            case "connect":
                // After the options too: hosts put their --config first and append what they are given.
                guard !sawCommand else { throw UsageError(description: "'connect' must come only once, without another command") }
                sawCommand = true
                if case .help = a.command {
                    a.command = .help(topic: arg, man: false)
                } else if a.command != .version {
                    a.command = .connect
                }
            case "serve", "demo", "dev-issuer":
                guard !sawCommand, i == at else { throw UsageError(description: "'\(arg)' must come first, and only once") }
                sawCommand = true
                if case .help = a.command {
                    a.command = .help(topic: arg, man: false)
                } else if a.command != .version {
                    a.command = arg == "serve" ? .serve : arg == "demo" ? .demo : .devIssuer
                }
            default:
                if i == at && !sawCommand && !arg.hasPrefix("-") {
                    throw unknownCommand(arg, "unknown command", among: CommandHelp.commands.map { String($0.name.prefix { $0 != " " }) })
                }
                throw UsageError(description: "unknown argument '\(arg)'")
            }
            i += 1
        }
        try a.checkSocketOptions(socketFlags)
        return a
    }

    /// "unknown command 'logn'; did you mean 'login'?": a typo names what it was probably meant
    /// to be, as git and gh do, rather than sending a newcomer through the whole help.
    static func unknownCommand(_ word: String, _ problem: String, among names: [String]) -> UsageError {
        let suggestion = KeySuggestion.closest(to: word, among: Array(Set(names)).sorted()).map { "; did you mean '\($0)'?" } ?? ""
        return UsageError(description: "\(problem) '\(word)'\(suggestion)")
    }

    /// "'token' does not take --jsn; did you mean --json?": the options `help COMMAND` lists for
    /// the command (and the ones every command takes) are what a typo is matched against.
    static func unknownOption(_ option: String, of command: String) -> UsageError {
        let flag = option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option
        let names = CommandHelp.lookup(command).flatMap { $0.options.flatMap(\.names) } + ["--config", "--log-level", "--help"]
        let suggestion = flag.hasPrefix("--") ? KeySuggestion.closest(to: flag, among: Array(Set(names.filter { $0.hasPrefix("--") })).sorted()) : nil
        return UsageError(description: "'\(command)' does not take \(option)" + (suggestion.map { "; did you mean \($0)?" } ?? ""))
    }

    /// The options that take a value as the next argument, wherever they stand.
    static let valueFlags: Set<String> = ["--config", "--log-level", "--max-message-bytes", "--port"]

    /// What `COMMAND --help` shows: the command, or its subcommand (`config add --help`).
    static func helpTopic(_ name: String, _ rest: [String]) -> String {
        if let sub = rest.first(where: { !$0.hasPrefix("-") }), !CommandHelp.lookup("\(name) \(sub)").isEmpty { return "\(name) \(sub)" }
        return name
    }
}
