import JSONRPC

/// A one-shot subcommand (`login`, `token`, `git-credential`, …) and its options, parsed by hand.
/// Kept apart from `Arguments` so the long-lived agent's command line stays as it was.
struct ToolCommand: Equatable {
    enum Action: Equatable {
        case login(provider: String, username: String?, passwordStdin: Bool, tokenStdin: Bool, flow: LoginFlow?)
        case logout(provider: String)
        case status(json: Bool)
        case token(provider: String, json: Bool)
        /// `-X METHOD` (default GET): what a DPoP proof is made for.
        case header(url: String, method: String = "GET")
        case gitCredential(operation: String)
        case kubectlCredential(provider: String)
        case fetch(FetchOptions)
    }

    /// `fetch`'s curl-like options.
    struct FetchOptions: Equatable {
        var method: String?
        var headers: [String] = []
        /// `-d` / `--data-binary`: the text, or `@FILE` (`@-`: standard input).
        var data: String?
        /// `-d @FILE` drops CR and LF from the file, as curl does; `--data-binary` sends it as is.
        var binary = false
        var include = false
        var url = ""
    }

    /// `--device` / `--browser`: which interactive login the user expects; checked against the provider's flow.
    enum LoginFlow: String, Equatable { case device, browser }

    var action: Action
    /// `--account`: the account to use (token, header, fetch, kubectl-credential) or log out.
    var account: String?
    /// `--scope` (repeatable), `--audience`, `--resource`: a token shaped for one API.
    var scopes: [String] = []
    var audience: String?
    var resource: String?
    /// `logout --all`: every account of the provider.
    var all = false
    var configPath: String?
    var logLevel: Logger.Level = .warn
    var help = false

    /// Whether the command may run an interactive login (and so must handle Ctrl-C itself).
    var mayLogIn: Bool {
        switch action {
        case .login, .kubectlCredential: return true
        default: return false
        }
    }

    static let names: Set<String> = ["login", "logout", "status", "token", "header", "fetch", "git-credential", "kubectl-credential"]

    static let usage = """
          auth-agent login PROVIDER [--username U] [--password-stdin | --token-stdin] [--device | --browser]
                                           log in at the terminal (secret fields without echo; device
                                           codes and browser URLs on stderr); prints who is logged in
          auth-agent logout PROVIDER [--account ID | --all]
                                           log out the default account, one account or all of them
                                           (revoking the tokens where configured)
          auth-agent status [--json]       every provider and account: state, user, expiry, store
          auth-agent token PROVIDER [--json]
                                           the access token alone on stdout, refreshed first when needed
          auth-agent header [-X METHOD] URL
                                           the header line for URL's provider ("Authorization: Bearer …");
                                           fails with nothing on stdout when nothing covers URL. Use it as
                                           h=$(auth-agent header "$URL") && curl -H "$h" "$URL"; a DPoP
                                           provider adds a "DPoP: …" proof line for METHOD (default GET):
                                           auth-agent header -X POST "$URL" > h && curl -X POST -H @h "$URL"
          auth-agent fetch [-X METHOD] [-H 'Name: value']… [-d BODY | --data-binary @FILE] [-i] URL
                                           send the request signed, refreshing once after a 401; prints the
                                           body (-i: status and headers first); exit 22 for HTTP ≥ 400
          auth-agent git-credential get|store|erase
                                           git credential helper: git config credential.helper '!auth-agent git-credential'
          auth-agent kubectl-credential PROVIDER
                                           kubectl exec credential plugin (ExecCredential v1 / v1beta1)

        token, header, fetch and kubectl-credential also take
          --account ID                     use this account of the provider instead of its default
          --scope S (repeatable), --audience A, --resource URI
                                           a token for those scopes / that API (RFC 8707), cached apart
        """

    /// Parses `argv` whose first element is one of `names`; options may follow in any order.
    static func parse(_ argv: [String]) throws(Arguments.UsageError) -> ToolCommand {
        let name = argv[0]
        var positional: [String] = []
        var flags: Set<String> = []
        var username: String?
        var configPath: String?
        var logLevel = Logger.Level.warn
        var help = false
        var fetch = FetchOptions()
        var account: String?
        var scopes: [String] = []
        var audience: String?
        var resource: String?
        var i = 1
        func value(_ flag: String, _ inline: String?) throws(Arguments.UsageError) -> String {
            if let inline { return inline }
            i += 1
            guard i < argv.count else { throw Arguments.UsageError(description: "\(flag) needs a value") }
            return argv[i]
        }
        let allowed = flagsAllowed[name] ?? []
        while i < argv.count {
            let arg = argv[i]
            var flag = arg
            var inline: String?
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                flag = String(arg[..<eq])
                inline = String(arg[arg.index(after: eq)...])
            }
            switch flag {
            case "-h", "--help": help = true
            case "--config": configPath = try value(flag, inline)
            case "--log-level":
                let v = try value(flag, inline)
                guard let level = Logger.Level(name: v) else {
                    throw Arguments.UsageError(description: "--log-level must be one of error, warn, info, debug, got '\(v)'")
                }
                logLevel = level
            case "--username" where name == "login": username = try value(flag, inline)
            case "--account" where Self.takesAccount.contains(name): account = try value(flag, inline)
            case "--scope" where Self.takesShape.contains(name): scopes.append(try value(flag, inline))
            case "--audience" where Self.takesShape.contains(name): audience = try value(flag, inline)
            case "--resource" where Self.takesShape.contains(name): resource = try value(flag, inline)
            case "-X" where name == "fetch" || name == "header", "--request" where name == "fetch" || name == "header":
                fetch.method = try value(flag, inline)
            case "-H" where name == "fetch", "--header" where name == "fetch": fetch.headers.append(try value(flag, inline))
            case "-d" where name == "fetch", "--data" where name == "fetch", "--data-binary" where name == "fetch":
                guard fetch.data == nil else { throw Arguments.UsageError(description: "'fetch' takes one body (-d or --data-binary)") }
                fetch.data = try value(flag, inline)
                fetch.binary = flag == "--data-binary"
            case "-i" where name == "fetch", "--include" where name == "fetch": fetch.include = true
            case _ where flag.hasPrefix("-") && flag.count > 1:
                guard allowed.contains(flag), inline == nil else {
                    throw Arguments.UsageError(description: "'\(name)' does not take \(arg)")
                }
                flags.insert(flag)
            default: positional.append(arg)
            }
            i += 1
        }
        func one(_ what: String) throws(Arguments.UsageError) -> String {
            guard positional.count == 1 else {
                throw Arguments.UsageError(description: "'\(name)' needs exactly one \(what)" + (positional.count > 1 ? ", got \(positional.count) arguments" : ""))
            }
            return positional[0]
        }
        var command = ToolCommand(action: .status(json: false), account: account, scopes: scopes, audience: audience, resource: resource,
                                  all: flags.contains("--all"), configPath: configPath, logLevel: logLevel, help: help)
        if help { return command }
        if command.all && account != nil { throw Arguments.UsageError(description: "--all and --account exclude each other") }
        if account?.isEmpty == true { throw Arguments.UsageError(description: "--account needs an account id") }
        switch name {
        case "login":
            if flags.contains("--password-stdin") && flags.contains("--token-stdin") {
                throw Arguments.UsageError(description: "--password-stdin and --token-stdin exclude each other")
            }
            if flags.contains("--device") && flags.contains("--browser") {
                throw Arguments.UsageError(description: "--device and --browser exclude each other")
            }
            let flow: LoginFlow? = flags.contains("--device") ? .device : flags.contains("--browser") ? .browser : nil
            command.action = .login(provider: try one("PROVIDER"), username: username, passwordStdin: flags.contains("--password-stdin"),
                                    tokenStdin: flags.contains("--token-stdin"), flow: flow)
        case "logout": command.action = .logout(provider: try one("PROVIDER"))
        case "status":
            guard positional.isEmpty else { throw Arguments.UsageError(description: "'status' takes no arguments besides --json") }
            command.action = .status(json: flags.contains("--json"))
        case "token": command.action = .token(provider: try one("PROVIDER"), json: flags.contains("--json"))
        case "header": command.action = .header(url: try one("URL"), method: fetch.method ?? "GET")
        case "fetch":
            fetch.url = try one("URL")
            command.action = .fetch(fetch)
        case "git-credential":
            let operation = try one("operation (get, store or erase)")
            // git may add operations in later versions; helpers must ignore the ones they do not know.
            command.action = .gitCredential(operation: operation)
        default:
            command.action = .kubectlCredential(provider: try one("PROVIDER"))
        }
        return command
    }

    private static let flagsAllowed: [String: Set<String>] = [
        "login": ["--password-stdin", "--token-stdin", "--device", "--browser"],
        "status": ["--json"], "token": ["--json"], "logout": ["--all"],
    ]
    private static let takesAccount: Set<String> = ["token", "header", "fetch", "logout", "kubectl-credential", "git-credential"]
    private static let takesShape: Set<String> = ["token", "header", "fetch", "kubectl-credential"]
}
