import JSONRPC

/// The command line, parsed by hand (no dependencies): a subcommand and options.
struct Arguments {
    enum Command: Equatable { case serve, demo, devIssuer, help, version, tool(ToolCommand), connect }

    var command: Command = .serve
    var configPath: String?
    var maxMessageBytes = 1 << 20
    var logLevel: Logger.Level = .warn
    var port: UInt16 = 0
    /// `serve --socket`: listen on a Unix-domain socket instead of stdin/stdout.
    var socket: SocketOptions?
    /// `serve --stop`: end the socket agent `AUTH_AGENT_SOCK` names.
    var stop = false

    static let version = "0.1.0"

    static let usage = """
        auth-agent \(version): delegate authentication to a long-lived process spoken to over
        stdin/stdout with JSON-RPC 2.0, one message per line.

        Usage:
          auth-agent [serve] [options]     run the agent on stdin/stdout (or a socket: --socket)
        \(ToolCommand.usage)
          auth-agent connect [--socket PATH] [options]
                                           relay stdin/stdout to the socket agent (PATH, else AUTH_AGENT_SOCK,
                                           else the default path), for hosts that spawn an agent; without
                                           one answering within 1 s, serve on stdin/stdout as 'serve' does
          auth-agent demo [options]        run the agent against a built-in loopback dev issuer
          auth-agent dev-issuer [--port N] run only the loopback dev issuer (for tests and clients): prints
                                           {"issuer": URL} and serves until stdin closes or SIGTERM

        Options:
          --config PATH            configuration file (default: $AUTH_AGENT_CONFIG, else
                                   $XDG_CONFIG_HOME/auth-agent/config.json)
          --max-message-bytes N    longest accepted message line in bytes (default 1048576)
          --log-level LEVEL        error, warn, info or debug; logs go to stderr (default warn)
          --port N                 dev-issuer: port on 127.0.0.1 (default: any free port)
          --socket [PATH]          serve: listen on a Unix-domain socket, one session per connection
                                   (default $XDG_RUNTIME_DIR/auth-agent/agent.sock, else
                                   /tmp/auth-agent-$UID/agent.sock); only this user may connect
          --daemon                 with --socket: go to the background, printing shell lines that set
                                   AUTH_AGENT_SOCK and AUTH_AGENT_PID (eval "$(auth-agent serve --socket --daemon)")
          --forward-socket PATH    with --socket: a second socket, for ssh -R, serving only the providers
          --forward-providers A,B  named here (the others do not exist on it)
          --stop                   serve: end the socket agent AUTH_AGENT_SOCK names
          -h, --help               show this help
          --version                print the version

        Sessions are kept in $XDG_STATE_HOME/auth-agent (default ~/.local/state/auth-agent).
        The protocol is described in schema/openrpc.json.

        Exit codes: 0 ok; 1 the operation failed (the protocol error's reason, e.g. notLoggedIn or
        sessionExpired, on stderr); 2 bad command line or configuration (also: a one-shot command with
        store.kind "memory" and no socket agent); 3 the auth server or the store is unavailable, retry later; 22 fetch got HTTP >= 400;
        130 interrupted (Ctrl-C during a login: nothing was saved).
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    static func parse(_ argv: [String]) throws -> Arguments {
        var a = Arguments()
        // The one-shot subcommands (login, token, git-credential, …) parse their own options.
        if let first = argv.first, ToolCommand.names.contains(first) {
            let tool = try ToolCommand.parse(argv)
            a.command = tool.help ? .help : .tool(tool)
            return a
        }
        var i = 0
        func value(_ flag: String) throws -> String {
            i += 1
            guard i < argv.count else { throw UsageError(description: "\(flag) needs a value") }
            return argv[i]
        }
        var sawCommand = false
        var daemon = false
        var forwardPath: String?
        var forwardProviders: [String]?
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
            case "-h", "--help": a.command = .help
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
            case "--daemon": daemon = true
            case "--stop": a.stop = true
            case "--forward-socket": forwardPath = try take()
            case "--forward-providers":
                forwardProviders = try take().split(separator: ",", omittingEmptySubsequences: false).map { String($0) }
                guard !forwardProviders!.contains(where: \.isEmpty) else { throw UsageError(description: "--forward-providers takes provider ids separated by commas") }
            case "--port":
                let v = try take()
                guard let p = UInt16(v) else { throw UsageError(description: "--port must be a number from 0 to 65535, got '\(v)'") }
                a.port = p
            case "connect":
                // After the options too: hosts put their --config first and append what they are given.
                guard !sawCommand else { throw UsageError(description: "'connect' must come only once, without another command") }
                sawCommand = true
                if a.command != .help && a.command != .version { a.command = .connect }
            case "serve", "demo", "dev-issuer":
                guard !sawCommand, i == 0 else { throw UsageError(description: "'\(arg)' must come first, and only once") }
                sawCommand = true
                if a.command != .help && a.command != .version {
                    a.command = arg == "serve" ? .serve : arg == "demo" ? .demo : .devIssuer
                }
            default:
                throw UsageError(description: "unknown argument '\(arg)'")
            }
            i += 1
        }
        try a.checkSocketOptions(daemon: daemon, forwardPath: forwardPath, forwardProviders: forwardProviders)
        return a
    }
}
