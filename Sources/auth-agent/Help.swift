/// Every command's documentation in one table, the single source of `--help`, `help COMMAND`,
/// `COMMAND --help`, the man page (`help --man`) and the shell completions, so none of them can
/// say something the others do not.
struct CommandHelp: Sendable {
    enum Section: String, CaseIterable, Sendable {
        case agent = "The agent"
        case tools = "Logins, tokens and credential helpers"
        case setup = "Configuration and the shell"
        case development = "Trying it and developing against it"
    }

    /// What the command's positional argument is, for completion.
    /// What a command's one operand completes to: a provider id, a learned one (`forget`), fixed words.
    enum Operand: Sendable, Equatable { case none, provider, learnedProvider, words([String]) }

    struct Option: Sendable {
        let flag: String
        let text: String
        /// The flags as typed (`-X`, `--request`), for completion.
        var names: [String] { flag.split(separator: ",").compactMap { $0.split(separator: " ").first.map(String.init) }.filter { $0.hasPrefix("-") } }
    }

    let name: String
    let synopsis: String
    let summary: String
    var options: [Option] = []
    let section: Section
    var operand: Operand = .none

    static let version = "0.1.0"

    static let globalOptions = [
        Option(flag: "--config PATH", text: "configuration file (default: $AUTH_AGENT_CONFIG, else $XDG_CONFIG_HOME/auth-agent/config.json, else ~/.config/auth-agent/config.json)"),
        Option(flag: "--log-level LEVEL", text: "error, warn, info or debug; logs go to stderr (default warn); debug logs each request to an auth server or by fetch (method, URL without query, status, milliseconds; never a secret)"),
        Option(flag: "-h, --help", text: "show this help, or one command's"),
        Option(flag: "--version", text: "print the version"),
    ]

    private static let account = Option(flag: "--account ID", text: "use this account of the provider instead of its default (an account id, or a name its user logs in with)")
    private static let shape = [
        Option(flag: "--scope S", text: "a token for these scopes (repeatable), cached apart from the login's token"),
        Option(flag: "--audience A", text: "a token for this audience"),
        Option(flag: "--resource URI", text: "a token for this API (RFC 8707)"),
    ]

    static let commands: [CommandHelp] = [
        CommandHelp(name: "serve", synopsis: "[--max-message-bytes N] [--socket [PATH] [--daemon] [--max-connections N] [--forward-socket PATH --forward-providers A,B [--forward-max-connections N]] | --stop]",
                    summary: "Run the agent on stdin/stdout (also without a command): JSON-RPC 2.0, one message per line (the protocol is described in schema/openrpc.json). With --socket, on a Unix-domain socket instead: one agent for every tool of a session, each connection a session of its own.",
                    options: [Option(flag: "--max-message-bytes N", text: "longest accepted message line in bytes (default 1048576)"),
                              Option(flag: "--socket [PATH]", text: "listen on a Unix-domain socket (default $XDG_RUNTIME_DIR/auth-agent/agent.sock, else /tmp/auth-agent-$UID/agent.sock); only this user may connect"),
                              Option(flag: "--daemon", text: "with --socket: go to the background, printing shell lines that set AUTH_AGENT_SOCK and AUTH_AGENT_PID (eval \"$(auth-agent serve --socket --daemon)\")"),
                              Option(flag: "--max-connections N", text: "with --socket: connections served at once (default 512); more are closed at once, the agent raising its soft descriptor limit to the hard one and keeping descriptors in reserve"),
                              Option(flag: "--forward-socket PATH", text: "with --socket: a second socket, for ssh -R, on which only --forward-providers exist"),
                              Option(flag: "--forward-providers A,B", text: "the providers the forward socket serves"),
                              Option(flag: "--forward-max-connections N", text: "the same for the forward socket (default 64)"),
                              Option(flag: "--stop", text: "end the socket agent AUTH_AGENT_SOCK names")], section: .agent),
        CommandHelp(name: "connect", synopsis: "[--socket PATH]",
                    summary: "For hosts that spawn an agent: relay stdin/stdout to the socket agent (PATH, else AUTH_AGENT_SOCK, else the default path); where none answers within 1 s, serve on stdin/stdout as 'serve' does.",
                    options: [Option(flag: "--socket PATH", text: "the socket agent to relay to")], section: .agent),
        CommandHelp(name: "login", synopsis: "PROVIDER|URL [--username U] [--password-stdin | --token-stdin] [--device | --browser] [--as NAME]",
                    summary: "Log in at the terminal (with no PROVIDER, at a terminal: the questions of 'setup'): secret fields are asked without echo, device codes and browser URLs are shown on stderr. Prints who is logged in. For a provider with several flows, --device, --browser, --password-stdin and --token-stdin choose one (default: its first; over SSH without a display, the device code when listed). A browser login also takes the final redirect URL pasted on the terminal, for a browser that cannot reach this machine. An API's URL instead of a provider learns it from its metadata (no configuration needed) and logs in by browser (opened where a display exists) or --device.",
                    options: [Option(flag: "--username U", text: "the username (with --password-stdin, for scripts)"),
                              Option(flag: "--password-stdin", text: "read the password from the first line of stdin"),
                              Option(flag: "--token-stdin", text: "read a token to paste from the first line of stdin"),
                              Option(flag: "--device", text: "log in with a device code (the provider's deviceCode flow)"),
                              Option(flag: "--browser", text: "log in in a browser (the provider's authorizationCode flow)"),
                              Option(flag: "--as NAME", text: "with a URL: the provider id the API gets when it is learned now, instead of one made from its host")],
                    section: .tools, operand: .provider),
        CommandHelp(name: "logout", synopsis: "PROVIDER [--account ID | --all]",
                    summary: "Log out the default account, one account or all of them, revoking the tokens where the provider is configured to.",
                    options: [account, Option(flag: "--all", text: "every account of the provider")], section: .tools, operand: .provider),
        CommandHelp(name: "forget", synopsis: "PROVIDER",
                    summary: "Forget a provider learned from an API (login URL, fetch): log out every account, revoke the tokens, delete it and its client registration.",
                    options: [], section: .tools, operand: .learnedProvider),
        CommandHelp(name: "status", synopsis: "[--json]", summary: "Every provider and account: state, user, expiry and the store in use.",
                    options: [Option(flag: "--json", text: "the protocol's status result")], section: .tools),
        CommandHelp(name: "token", synopsis: "PROVIDER [--json] [--min-valid SECONDS]",
                    summary: "The access token alone on stdout, refreshed first when needed.",
                    options: [Option(flag: "--json", text: "print {accessToken, tokenType, expiresAt}"),
                              Option(flag: "--min-valid SECONDS", text: "refresh first unless the token is valid that long; when even the new one is not, it is printed and stderr says so"),
                              account] + shape,
                    section: .tools, operand: .provider),
        CommandHelp(name: "refresh", synopsis: "PROVIDER [--account ID]",
                    summary: "Refresh the provider's token now, and say until when the new one is valid.",
                    options: [account], section: .tools, operand: .provider),
        CommandHelp(name: "header", synopsis: "[-X METHOD] [--json] URL",
                    summary: "The header line for the provider covering URL (\"Authorization: Bearer …\"); fails with nothing on stdout when nothing covers URL or nobody is logged in. Use it as h=$(auth-agent header \"$URL\") && curl -H \"$h\" \"$URL\". A DPoP provider adds a \"DPoP: …\" proof line for METHOD and URL: auth-agent header -X POST \"$URL\" > h && curl -X POST -H @h \"$URL\".",
                    options: [Option(flag: "-X, --request METHOD", text: "the method the DPoP proof is made for (default GET)"),
                              Option(flag: "--json", text: "one JSON object, {\"Authorization\": …[, \"DPoP\": …]}: what an MCP host's headersHelper reads"),
                              account] + shape,
                    section: .tools),
        CommandHelp(name: "fetch", synopsis: "[-X METHOD] [-H 'Name: value']… [-d BODY | --data-binary @FILE] [-i] URL",
                    summary: "Send the request signed by the provider covering URL (unsigned when none does), refreshing and resending once after a 401; prints the body. Exit 22 for HTTP ≥ 400.",
                    options: [Option(flag: "-X, --request METHOD", text: "the method (default GET, or POST with a body)"),
                              Option(flag: "-H, --header 'Name: value'", text: "a request header (repeatable)"),
                              Option(flag: "-d, --data BODY", text: "the body; @FILE reads a file without its line breaks, @- stdin"),
                              Option(flag: "--data-binary @FILE", text: "the file as is"),
                              Option(flag: "-i, --include", text: "print the status line and headers first"),
                              account] + shape,
                    section: .tools),
        CommandHelp(name: "git-credential", synopsis: "get|store|erase",
                    summary: "git's credential helper: git config --global credential.https://git.example.com.helper '!auth-agent git-credential' (or run 'git-credential configure').",
                    options: [Option(flag: "--account ID", text: "use this account instead of the one git's username names, or the default")],
                    section: .tools, operand: .words(["get", "store", "erase", "configure"])),
        CommandHelp(name: "git-credential configure", synopsis: "[URL]",
                    summary: "Make git use the agent for URL, or without one for every https origin of every provider: writes git's credential.URL.helper line to ~/.gitconfig, once.",
                    section: .setup),
        CommandHelp(name: "kubectl-credential", synopsis: "PROVIDER",
                    summary: "A kubectl exec credential plugin (ExecCredential v1 / v1beta1); logs in at the terminal first when kubectl allows it.",
                    options: [account] + shape, section: .tools, operand: .provider),
        CommandHelp(name: "mcp", synopsis: "URL [--account ID] [--scope S]… [--resource URI] [--device] [--timeout SECONDS] [--header 'Name: value']… [--ignore-tool PATTERN]… [--protocol-version REVISION] [--transport STRATEGY] [--callback-port N] [--allow-http]",
                    summary: "Be an MCP host's stdio server for the remote MCP server at URL (Streamable HTTP, or HTTP+SSE for old servers), every request signed with the agent's login for URL: logs in at the terminal when nobody is, refreshes once after a 401, opens a server's URL elicitation in the browser for a host that cannot, ends the session at the end of input.",
                    options: [account] + shape + [
                        Option(flag: "--device", text: "log in with the device flow rather than the browser when a login is needed"),
                        Option(flag: "--timeout SECONDS", text: "the most one request may take, its streamed answer included (default 300)"),
                        Option(flag: "--header 'Name: value'", text: "sent with every request to the server (repeatable); never Authorization, which the agent signs"),
                        Option(flag: "--ignore-tool PATTERN", text: "hide tools whose name matches (* any run of characters) from tools/list and refuse calling them (repeatable)"),
                        Option(flag: "--protocol-version REVISION", text: "offer the server this MCP revision (2025-03-26, 2025-06-18, 2025-11-25 or 2026-07-28) whatever the host speaks, translating between them; without it the host's own, translated only when the server refuses it"),
                        Option(flag: "--transport STRATEGY", text: "http-first (default: Streamable HTTP, the HTTP+SSE transport of 2024-11-05 when URL answers the first POST with 404 or 405), sse-first (the other way round), http-only or sse-only"),
                        Option(flag: "--callback-port N", text: "a learned server's browser login listens on 127.0.0.1:N, the port registered with a new client (learn.redirectPort)"),
                        Option(flag: "--allow-http", text: "allow plain http to a host other than loopback (a trusted private network); no token is sent there"),
                    ], section: .tools),
        CommandHelp(name: "client-metadata", synopsis: "URL",
                    summary: "Print the agent's Client ID Metadata Document for the https URL it will be published at (its client_id): publish it there and set \"clientMetadataUrl\": URL in the configuration, and servers that accept such documents need no registration.",
                    section: .setup),
        CommandHelp(name: "setup", synopsis: "",
                    summary: "A first run that asks (also 'auth-agent login' with no provider, at a terminal): what to sign in to (an API's URL, or an OpenID Connect / OAuth server), its issuer, the client id and what to register, the origins to sign, the flow; writes the provider with config add's checks, prints the equivalent config add line, then logs in.",
                    section: .setup),
        CommandHelp(name: "config path", synopsis: "", summary: "Print where the configuration file is expected.", section: .setup),
        CommandHelp(name: "config check", synopsis: "", summary: "Validate the configuration file; exit 2 with the problem when it is invalid.", section: .setup),
        CommandHelp(name: "config add", synopsis: "ID --issuer URL --client-id ID --origin URL… [--client-secret-stdin] [--flow F]… [--scope S]… [--display-name NAME] [--profile P]… [--generate-key]",
                    summary: "Add an OAuth provider: fetch the issuer's discovery document, show and check the endpoints found, and write the provider into the configuration file (created 0600 when absent; other providers and keys are kept).",
                    options: [Option(flag: "--issuer URL", text: "the OpenID Connect / OAuth issuer"),
                              Option(flag: "--client-id ID", text: "the OAuth client id"),
                              Option(flag: "--origin URL", text: "an origin the token may be sent to (repeatable)"),
                              Option(flag: "--client-secret-stdin", text: "read the client secret from the first line of stdin (kept in the file)"),
                              Option(flag: "--flow F", text: "authorizationCode, deviceCode, password or clientCredentials (repeatable; default the first of authorizationCode, deviceCode the issuer supports)"),
                              Option(flag: "--scope S", text: "a scope to ask for at login (repeatable)"),
                              Option(flag: "--display-name NAME", text: "the name people see"),
                              Option(flag: "--profile P", text: "a provider profile (entra, google, github, gitlab, okta, auth0, keycloak: picked from the issuer when it matches) and/or fapi2 (FAPI 2.0: PAR, DPoP, private_key_jwt, RFC 9207 iss)"),
                              Option(flag: "--generate-key", text: "make a P-256 key for private_key_jwt, kept in the keyring (without one, 0600 beside the configuration as ID.client-key.pem); prints the public JWK to register at the server")],
                    section: .setup),
        CommandHelp(name: "config set", synopsis: "ID KEY VALUE…",
                    summary: "Set one key of a provider in place, checked as the agent reads the file: origins and scopes take a list (auth-agent config set corp origins https://api.example.com https://git.example.com), flow one flow or several, openBrowser and dpop true or false, every other key one value. The client secret is not set here (config add --client-secret-stdin).",
                    section: .setup, operand: .provider),
        CommandHelp(name: "config remove", synopsis: "ID", summary: "Remove the provider from the configuration file (its logins stay in the store until 'logout').",
                    section: .setup, operand: .provider),
        CommandHelp(name: "completion", synopsis: "bash|zsh|fish",
                    summary: "Print a completion script: eval \"$(auth-agent completion bash)\" in ~/.bashrc; zsh: ~/.zshrc; fish: auth-agent completion fish > ~/.config/fish/completions/auth-agent.fish.",
                    section: .setup, operand: .words(["bash", "zsh", "fish"])),
        CommandHelp(name: "help", synopsis: "[COMMAND] [--man]",
                    summary: "This help, or one command's; --man prints the manual page as roff (install -D -m 0644 to ~/.local/share/man/man1/auth-agent.1).",
                    options: [Option(flag: "--man", text: "the manual page, as roff")], section: .setup),
        CommandHelp(name: "demo", synopsis: "",
                    summary: "Run the agent against a built-in loopback dev issuer with three providers and a memory store; prints what to type on stderr.",
                    section: .development),
        CommandHelp(name: "dev-issuer", synopsis: "[--port N]",
                    summary: "Run only the loopback dev issuer (for tests and clients): prints {\"issuer\": URL} and serves until stdin closes or SIGTERM. Its OAuth clients: cli (public), cli-par (public) whose authorization requests must be pushed (PAR), and svc (secret svc-secret); its users: alice/wonderland and bob/builder. POST /_admin/client {clientId, secret?, requirePAR?, jwk?, fapi2?} adds or changes a client (a public JWK for private_key_jwt; FAPI 2.0 refusals).",
                    options: [Option(flag: "--port N", text: "port on 127.0.0.1 (default: any free port)")], section: .development),
    ]

    static let exitCodes = """
        0 ok; 1 the operation failed (the protocol error's reason, e.g. notLoggedIn or sessionExpired, on stderr); \
        2 bad command line or configuration (also: a one-shot command with store.kind "memory" and no socket agent); \
        3 the auth server or the store is unavailable, retry later; 22 fetch got HTTP >= 400; \
        130 interrupted (Ctrl-C during a login: nothing was saved).
        """

    static let files = """
        Sessions are kept in $XDG_STATE_HOME/auth-agent (default ~/.local/state/auth-agent), or in the OS keyring.
        """

    /// The commands `help TOPIC` shows: the one named and its subcommands (`help config`, `help git-credential`).
    static func lookup(_ topic: String) -> [CommandHelp] {
        commands.filter { $0.name == topic || $0.name.hasPrefix(topic + " ") }
    }

    /// The top-level words the command line knows, for completion.
    static var topLevelWords: [String] {
        var words: [String] = []
        for c in commands {
            let word = String(c.name.split(separator: " ")[0])
            if !words.contains(word) { words.append(word) }
        }
        return words
    }

    var usageLine: String { "auth-agent \(name)" + (synopsis.isEmpty ? "" : " \(synopsis)") }

    // MARK: Text

    /// `auth-agent --help`.
    static var usage: String {
        var text = """
            auth-agent \(version): delegate authentication to a long-lived process spoken to over
            stdin/stdout with JSON-RPC 2.0, one message per line; and log in, get tokens and feed git,
            kubectl and scripts from the shell.

            """
        for section in Section.allCases {
            text += "\n\(section.rawValue):\n"
            for c in commands where c.section == section {
                text += "  \(c.usageLine)\n" + wrap(c.summary, indent: 6)
            }
        }
        text += "\nGlobal options (anywhere on the line):\n" + optionLines(globalOptions)
        text += "\n'auth-agent help COMMAND' or 'auth-agent COMMAND --help' shows a command's options.\n"
        text += "\(files)\n\nExit codes:\n" + wrap(exitCodes, indent: 2)
        return text
    }

    /// `auth-agent help COMMAND`, `auth-agent COMMAND --help`: that command's usage and options only.
    static func usage(of topic: String) -> String? {
        let found = lookup(topic)
        guard !found.isEmpty else { return nil }
        return found.map { c in
            var text = "Usage: \(c.usageLine)\n\n" + wrap(c.summary, indent: 2)
            if !c.options.isEmpty { text += "\nOptions:\n" + optionLines(c.options) }
            return text
        }.joined(separator: "\n") + "\nGlobal options: --config PATH, --log-level LEVEL (see 'auth-agent --help').\n"
    }

    private static func optionLines(_ options: [Option]) -> String {
        options.map { o in
            let head = "  " + o.flag
            let body = wrap(o.text, indent: 26)
            return head.count < 25 ? head + String(repeating: " ", count: 26 - head.count) + String(body.dropFirst(26)) : head + "\n" + body
        }.joined()
    }

    /// `text` broken into lines of at most 100 columns, each indented.
    static func wrap(_ text: String, indent: Int) -> String {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && pad.count + line.count + 1 + word.count > 100 {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines.map { pad + $0 + "\n" }.joined()
    }

    // MARK: Manual page

    /// The manual page in roff (man(7) macros), from the same table as `--help`.
    static var manPage: String {
        var roff = """
            .TH AUTH-AGENT 1 "" "auth-agent \(version)" "User Commands"
            .SH NAME
            auth-agent \\- delegate authentication to a long-lived agent process, and use its logins from the shell
            .SH SYNOPSIS
            .B auth-agent
            [\\fICOMMAND\\fR] [\\fIOPTIONS\\fR]
            .SH DESCRIPTION
            Without a command, auth-agent runs the agent: a process that programs spawn and talk to over stdin/stdout with
            JSON-RPC 2.0, one message per line (schema/openrpc.json). The other commands are one-shot processes on the same
            session store, so a terminal, git, kubectl and editors share one login.

            """
        for section in Section.allCases {
            roff += ".SH \(escape(section.rawValue.uppercased()))\n"
            for c in commands where c.section == section {
                roff += ".TP\n.B \(escape(c.usageLine))\n\(escape(c.summary))\n"
                if !c.options.isEmpty {
                    roff += ".RS\n" + c.options.map { ".TP\n.B \(escape($0.flag))\n\(escape($0.text))\n" }.joined() + ".RE\n"
                }
            }
        }
        roff += ".SH GLOBAL OPTIONS\nThese may appear anywhere on the command line.\n"
        roff += globalOptions.map { ".TP\n.B \(escape($0.flag))\n\(escape($0.text))\n" }.joined()
        roff += ".SH EXIT STATUS\n\(escape(exitCodes))\n.SH FILES\n\(escape(files))\n"
        return roff
    }

    /// Text as roff reads it literally: backslashes and hyphens escaped, no line starting a request;
    /// `…` spelled `...`, since groff's ASCII device (`man` in a C locale) has no glyph for it.
    static func escape(_ text: String) -> String {
        var out = text.replacing("\\", with: "\\e").replacing("-", with: "\\-").replacing("…", with: "...")
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out.replacing("\n.", with: "\n\\&.").replacing("\n'", with: "\n\\&'")
    }
}
