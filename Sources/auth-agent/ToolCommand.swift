import AuthCore
import JSONRPC
import Logging

/// A one-shot subcommand (`login`, `token`, `git-credential`, …) and its options, parsed by hand.
/// Kept apart from `Arguments` so the long-lived agent's command line stays as it was.
struct ToolCommand: Equatable {
    enum Action: Equatable {
        /// `name`: `--as NAME`, the id an API learned from its URL gets.
        case login(provider: String, username: String?, passwordStdin: Bool, tokenStdin: Bool, flow: LoginFlow?, name: String? = nil)
        case logout(provider: String)
        /// `forget ID`: a learned provider logged out, revoked and deleted with its registration.
        case forget(provider: String)
        case status(json: Bool)
        case token(provider: String, json: Bool)
        /// `-X METHOD` (default GET): what a DPoP proof is made for; `--json`: one object, the shape
        /// MCP hosts' `headersHelper` settings read.
        case header(url: String, method: String = "GET", json: Bool = false)
        case gitCredential(operation: String)
        case kubectlCredential(provider: String)
        case fetch(FetchOptions)
        case refresh(provider: String)
        case config(ConfigAction)
        /// `git-credential configure [URL]`: git's helper line for URL, or every provider's https origins.
        case gitConfigure(url: String?)
        /// `client-metadata URL`: the Client ID Metadata Document to publish at URL.
        case clientMetadata(url: String)
        /// `setup`, or `login` with no provider (`fromLogin`): the first run's questions, then a login.
        case setup(fromLogin: Bool)
    }

    /// `config path|check|add|remove|set`.
    enum ConfigAction: Equatable {
        case path, check, add(ProviderDraft), remove(id: String)
        /// `config set ID KEY VALUE…`: one key of a provider, in place.
        case set(id: String, key: String, values: [String])
    }

    /// `config add`'s options: a provider to discover and write.
    struct ProviderDraft: Equatable {
        var id = ""
        var issuer = ""
        var clientId = ""
        var origins: [String] = []
        var displayName: String?
        var flows: [String] = []
        var scopes: [String] = []
        /// `--client-secret-stdin`: the secret comes from stdin, never argv.
        var clientSecretStdin = false
        /// `--profile P` (repeatable): the provider is held to these profiles (`fapi2`).
        var profiles: [String] = []
        /// `--generate-key`: a new key for `private_key_jwt`, kept in the keyring (else beside the configuration); its public JWK is printed.
        var generateKey = false
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

    /// `--device` / `--browser`: which interactive login the user wants, among the provider's flows.
    enum LoginFlow: String, Equatable { case device, browser }

    var action: Action
    /// `--account`: the account to use (token, header, fetch, kubectl-credential) or log out, by id or by name.
    var account: String?
    /// `--scope` (repeatable), `--audience`, `--resource`: a token shaped for one API.
    var scopes: [String] = []
    var audience: String?
    var resource: String?
    /// `logout --all`: every account of the provider.
    var all = false
    /// `token --min-valid SECONDS`: refresh first unless the token is valid at least that long.
    var minValid: Int?
    var configPath: String?
    var logLevel: Logger.Level = .warn
    var help = false

    /// Whether the command may run an interactive login (and so must handle Ctrl-C itself).
    var mayLogIn: Bool {
        switch action {
        case .login, .kubectlCredential, .fetch, .setup: return true
        default: return false
        }
    }

    static let names: [String] = ["login", "logout", "forget", "status", "token", "refresh", "header", "fetch", "git-credential", "kubectl-credential", "config",
                                  "client-metadata", "setup"]

    /// Parses `argv` whose first element is one of `names`; options may follow in any order.
    static func parse(_ argv: [String]) throws(Arguments.UsageError) -> ToolCommand {
        let name = argv[0]
        var positional: [String] = []
        var flags: [String] = []
        var username: String?
        var learnedName: String?
        var configPath: String?
        var logLevel = Logger.Level.warn
        var help = false
        var fetch = FetchOptions()
        var account: String?
        var scopes: [String] = []
        var audience: String?
        var resource: String?
        var draft = ProviderDraft()
        var minValid: Int?
        var i = 1
        func value(_ flag: String, _ inline: String?) throws(Arguments.UsageError) -> String {
            if let inline { return inline }
            i += 1
            guard i < argv.count else { throw Arguments.UsageError(description: "\(flag) needs a value") }
            return argv[i]
        }
        let allowed = flagsAllowed(name)
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
            case "--as" where name == "login": learnedName = try value(flag, inline)
            case "--min-valid" where name == "token":
                let v = try value(flag, inline)
                guard let n = Int(v), n >= 0, n <= 31_536_000 else {
                    throw Arguments.UsageError(description: "--min-valid must be a number of seconds from 0 to 31536000 (a year), got '\(v)'")
                }
                minValid = n
            case "--issuer" where name == "config": draft.issuer = try value(flag, inline)
            case "--client-id" where name == "config": draft.clientId = try value(flag, inline)
            case "--origin" where name == "config": draft.origins.append(try value(flag, inline))
            case "--flow" where name == "config": draft.flows.append(try value(flag, inline))
            case "--scope" where name == "config": draft.scopes.append(try value(flag, inline))
            case "--display-name" where name == "config": draft.displayName = try value(flag, inline)
            case "--profile" where name == "config": draft.profiles.append(try value(flag, inline))
            case "--account" where Self.takesAccount.contains(name): account = try value(flag, inline)
            case "--scope" where Self.takesShape.contains(name): scopes.append(try value(flag, inline))
            case "--audience" where Self.takesShape.contains(name): audience = try value(flag, inline)
            case "--resource" where Self.takesShape.contains(name): resource = try value(flag, inline)
            case "-X" where name == "fetch" || name == "header", "--request" where name == "fetch" || name == "header":
                let method = try value(flag, inline)
                guard FetchRequest.isMethod(method) else {
                    throw Arguments.UsageError(description: "-X must be an HTTP method such as GET or POST, got \(method.debugDescription)")
                }
                fetch.method = method
            case "-H" where name == "fetch", "--header" where name == "fetch": fetch.headers.append(try value(flag, inline))
            case "-d" where name == "fetch", "--data" where name == "fetch", "--data-binary" where name == "fetch":
                guard fetch.data == nil else { throw Arguments.UsageError(description: "'fetch' takes one body (-d or --data-binary)") }
                fetch.data = try value(flag, inline)
                fetch.binary = flag == "--data-binary"
            case "-i" where name == "fetch", "--include" where name == "fetch": fetch.include = true
            case _ where flag.hasPrefix("-") && flag.count > 1:
                guard allowed.contains(flag), inline == nil else {
                    throw Arguments.unknownOption(arg, of: name)
                }
                if !flags.contains(flag) { flags.append(flag) }
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
                                  all: flags.contains("--all"), minValid: minValid, configPath: configPath, logLevel: logLevel, help: help)
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
            if positional.isEmpty && flags.isEmpty && username == nil && learnedName == nil {
                command.action = .setup(fromLogin: true)
                return command
            }
            let target = try one("PROVIDER")
            if learnedName != nil && !target.contains("://") {
                throw Arguments.UsageError(description: "--as names an API learned from its URL; a configured provider has its id")
            }
            command.action = .login(provider: target, username: username, passwordStdin: flags.contains("--password-stdin"),
                                    tokenStdin: flags.contains("--token-stdin"), flow: flow, name: learnedName)
        case "logout": command.action = .logout(provider: try one("PROVIDER"))
        case "forget": command.action = .forget(provider: try one("PROVIDER"))
        case "status":
            guard positional.isEmpty else { throw Arguments.UsageError(description: "'status' takes no arguments besides --json") }
            command.action = .status(json: flags.contains("--json"))
        case "token": command.action = .token(provider: try one("PROVIDER"), json: flags.contains("--json"))
        case "refresh": command.action = .refresh(provider: try one("PROVIDER"))
        case "config":
            draft.clientSecretStdin = flags.contains("--client-secret-stdin")
            draft.generateKey = flags.contains("--generate-key")
            command.action = .config(try configAction(positional, draft))
        case "header": command.action = .header(url: try one("URL"), method: fetch.method ?? "GET", json: flags.contains("--json"))
        case "fetch":
            fetch.url = try one("URL")
            command.action = .fetch(fetch)
        case "client-metadata": command.action = .clientMetadata(url: try one("URL (where the document will be published)"))
        case "setup":
            guard positional.isEmpty else { throw Arguments.UsageError(description: "'setup' takes no arguments: it asks its questions") }
            command.action = .setup(fromLogin: false)
        case "git-credential" where positional.first == "configure":
            guard positional.count <= 2 else { throw Arguments.UsageError(description: "'git-credential configure' takes at most one URL") }
            command.action = .gitConfigure(url: positional.count == 2 ? positional[1] : nil)
        case "git-credential":
            let operation = try one("operation (get, store or erase)")
            // git may add operations in later versions; helpers must ignore the ones they do not know.
            command.action = .gitCredential(operation: operation)
        default:
            command.action = .kubectlCredential(provider: try one("PROVIDER"))
        }
        return command
    }

    // Arrays and a switch, not sets and a dictionary: a one-shot helper's start-up paid for
    // instantiating their generic types (and hashing) more than for anything they decide.
    private static func flagsAllowed(_ command: String) -> [String] {
        switch command {
        case "login": return ["--password-stdin", "--token-stdin", "--device", "--browser"]
        case "status", "token", "header": return ["--json"]
        case "logout": return ["--all"]
        case "config": return ["--client-secret-stdin", "--generate-key"]
        default: return []
        }
    }
    private static let takesAccount = ["token", "refresh", "header", "fetch", "logout", "kubectl-credential", "git-credential"]
    private static let takesShape = ["token", "header", "fetch", "kubectl-credential"]

    /// `config SUBCOMMAND …`: each subcommand with exactly its operands; `add` with its required options.
    private static func configAction(_ positional: [String], _ draft: ProviderDraft) throws(Arguments.UsageError) -> ConfigAction {
        let sub = positional.first ?? ""
        let addOnly = draft.issuer.isEmpty && draft.clientId.isEmpty && draft.origins.isEmpty && draft.flows.isEmpty && draft.scopes.isEmpty
            && draft.displayName == nil && !draft.clientSecretStdin && draft.profiles.isEmpty && !draft.generateKey
        if sub != "add" && !addOnly { throw Arguments.UsageError(description: "only 'config add' takes provider options") }
        switch (sub, positional.count) {
        case ("path", 1): return .path
        case ("check", 1): return .check
        case ("remove", 2): return .remove(id: positional[1])
        case ("set", 4...): return .set(id: positional[1], key: positional[2], values: Array(positional[3...]))
        case ("set", _): throw Arguments.UsageError(description: "'config set' needs a provider ID, a key and its value (or values: origins, scopes, flow)")
        case ("add", 2):
            var draft = draft
            draft.id = positional[1]
            for (value, flag) in [(draft.issuer, "--issuer"), (draft.clientId, "--client-id")] where value.isEmpty {
                // A provider profile with fixed endpoints (GitHub) needs no issuer; `config add` says so if it does.
                if flag == "--issuer", !draft.profiles.isEmpty { continue }
                throw Arguments.UsageError(description: "'config add' needs \(flag)")
            }
            if draft.origins.isEmpty { throw Arguments.UsageError(description: "'config add' needs --origin (the origins the token may be sent to)") }
            return .add(draft)
        case ("path", _), ("check", _): throw Arguments.UsageError(description: "'config \(sub)' takes no arguments")
        case ("remove", _), ("add", _): throw Arguments.UsageError(description: "'config \(sub)' needs exactly one provider ID")
        default: throw Arguments.UsageError(description: "'config' needs a subcommand: path, check, add, remove or set")
        }
    }
}
