#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import Logging

/// `auth-agent setup`, and `auth-agent login` with no provider at a terminal: a first run that asks,
/// as `gh auth login` does, instead of a list of flags to learn first. It asks what to sign in to,
/// writes the provider with `config add`'s own checks (discovery, the flows the server offers),
/// prints the `config add` line a script would use for the same, then logs in through the agent
/// as `login` does. The questions are on the terminal (`/dev/tty`); stdout carries only the result.
enum Setup {
    /// One thing the first question offers.
    struct Choice: Equatable {
        enum Kind: Equatable {
            /// An API or MCP server by its URL: the agent learns its login from the 401 (`login URL`).
            case api
            /// An OpenID Connect / OAuth server by its issuer URL (`config add`).
            case issuer
            /// An identity provider with a profile (`config add --profile NAME`).
            case profile(ProviderProfile.Offer)
        }
        let kind: Kind
        let title: String
    }

    static let choices = ProviderProfile.offers.map { Choice(kind: .profile($0), title: $0.provider) } + [
        Choice(kind: .issuer, title: "Another OpenID Connect or OAuth server, by its issuer URL"),
        Choice(kind: .api, title: "An API or MCP server, by its URL (the agent learns how to log in from it)"),
    ]

    /// How often a question is asked again after an answer it cannot use, before giving up (exit 2).
    static let attempts = 3

    static func run(_ command: ToolCommand) throws(ToolFailure) -> String {
        guard let terminal = Terminal.controlling() else {
            throw ToolFailure(.usage, "'setup' asks its questions on a terminal and there is none; "
                + "from a script use 'auth-agent config add ID --issuer URL --client-id ID --origin URL' or 'auth-agent login URL'")
        }
        let asker = Asker(terminal: terminal)
        terminal.show("What do you want to sign in to?\n" + choices.enumerated().map { "  \($0.offset + 1)) \($0.element.title)\n" }.joined())
        let choice = try asker.pick("Choose", count: choices.count, default: choices.count)
        switch choices[choice].kind {
        case .api: return try api(asker, command: command)
        case .issuer: return try issuer(asker, command: command, profile: nil)
        case .profile(let offer): return try issuer(asker, command: command, profile: offer)
        }
    }

    /// `login URL`, after asking for the URL.
    private static func api(_ asker: Asker, command: ToolCommand) throws(ToolFailure) -> String {
        let url = try asker.ask("The API's URL (https://…)") { answer in
            Origin(url: answer) == nil ? "an absolute https URL (or http on loopback), such as https://api.example.com/mcp" : nil
        }
        let link = try AgentLink.open(configPath: command.configPath, logLevel: command.logLevel)
        defer { link.finish() }
        let line = try TerminalLogin.login(url, .init(), link: link)
        asker.terminal.show("Next time (or from a script): auth-agent login \(url)\n")
        return line
    }

    /// `config add` with the answers (held to `profile` when one was chosen), then `login`.
    private static func issuer(_ asker: Asker, command: ToolCommand, profile: ProviderProfile.Offer?) throws(ToolFailure) -> String {
        let path = AgentConfig.resolvePath(argument: command.configPath, environment: ProcessEnvironment.current())
        var draft = ToolCommand.ProviderDraft()
        draft.profiles = profile.map { [$0.name] } ?? []
        if profile?.fixedEndpoints != true {
            // A template without a part of the person's own is the issuer itself (Google's); one with
            // a `{part}` (a tenant, a realm) is shown as the shape to type.
            let template = profile?.issuerTemplate
            let fixed = template.flatMap { $0.contains("{") ? nil : $0 }
            let label = template.map { $0.contains("{") ? "The issuer's URL (\($0), your own in place of {…})" : "The issuer's URL" } ?? "The issuer's URL (https://…)"
            draft.issuer = try asker.ask(label, default: fixed) { answer in
                Origin(url: answer) == nil || answer.contains("{") ? "an absolute https URL (or http on loopback), such as https://id.example.com" : nil
            }
        }
        let logger = Logger(level: command.logLevel)
        let found = try ConfigCommand.discover(draft.issuer, profiles: draft.profiles, logger: logger)
        let flows = [Flow.authorizationCode, .deviceCode].filter(found.supports)
        guard !flows.isEmpty else {
            throw ToolFailure(.failed, "\(draft.issuer) names no authorization or device authorization endpoint: nobody can log in there interactively")
        }
        asker.terminal.show(registrationAdvice(flows, page: profile?.registrationPage))
        draft.clientId = try asker.ask("Client ID") { $0.isEmpty ? "the client id the server gave the registration" : nil }
        let secret = try asker.terminal.ask("Client secret (Enter for none, as a public client has)", secret: true)
        draft.origins = try asker.ask("Where the tokens may be sent: the API origins, separated by spaces (https://api.example.com)") { answer in
            let origins = answer.split(separator: " ").map(String.init)
            if origins.isEmpty { return "at least one origin: the token is sent nowhere else" }
            return origins.first { Origin(url: $0) == nil }.map { "\($0) is not an https origin (or http on loopback)" }
        }.split(separator: " ").map(String.init)
        if flows.count > 1 {
            // A profile's one default flow (GitHub: the device flow), else the one that suits this machine.
            let only = found.profileFlows.flatMap { $0.count == 1 ? $0.first : nil }
            let preferred = (only ?? ConfigCommand.preferredFlow(found)) == .deviceCode ? 2 : 1
            asker.terminal.show("How will you sign in?\n  1) In a browser on this machine\n  2) With a code, in a browser on any device\n")
            draft.flows = [try asker.pick("Choose", count: 2, default: preferred) == 0 ? Flow.authorizationCode.rawValue : Flow.deviceCode.rawValue]
        } else {
            draft.flows = [flows[0].rawValue]
        }
        let suggested = profile?.name ?? suggestedId(draft.issuer)
        draft.id = try asker.ask("A short name for it, to type in commands", default: suggested) { answer in
            ProviderConfig.idProblem(answer)
        }
        draft.clientSecretStdin = !secret.isEmpty
        try ConfigCommand.write(draft, found: found, secret: secret.isEmpty ? nil : secret, path: path, logger: logger)
        asker.terminal.show("Added \(draft.id) to \(path). The same from a script:\n  \(configAddLine(draft))\n")
        let link = try AgentLink.open(configPath: command.configPath, logLevel: command.logLevel)
        defer { link.finish() }
        return try TerminalLogin.login(draft.id, .init(), link: link)
    }

    /// What to register at the server for the flows it offers: the redirect URI the browser login uses.
    static func registrationAdvice(_ flows: [Flow], page: String? = nil) -> String {
        var lines = ["If you have no client id yet, register a public (native) client at " + (page ?? "the server") + " with"]
        if flows.contains(.authorizationCode) {
            lines.append("  redirect URI http://127.0.0.1/callback (any port, RFC 8252; fix one with 'config set ID redirectPort N')")
        }
        if flows.contains(.deviceCode) { lines.append("  the device authorization grant allowed") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The `config add` line that writes what the answers wrote (the secret from stdin, never argv).
    static func configAddLine(_ draft: ToolCommand.ProviderDraft) -> String {
        var words = ["auth-agent", "config", "add", draft.id] + (draft.issuer.isEmpty ? [] : ["--issuer", draft.issuer]) + ["--client-id", draft.clientId]
        for profile in draft.profiles { words += ["--profile", profile] }
        for origin in draft.origins { words += ["--origin", origin] }
        for flow in draft.flows { words += ["--flow", flow] }
        if draft.clientSecretStdin { words.append("--client-secret-stdin") }
        return words.map(SocketAgent.shellQuoted).joined(separator: " ")
    }

    /// A name from the issuer's host: the label before the domain's suffix (`id.example.com` → `example`).
    static func suggestedId(_ issuer: String) -> String {
        guard let host = Origin(url: issuer)?.host, host.contains(where: \.isLetter) else { return "corp" }
        let labels = host.split(separator: ".").map(String.init)
        let name = labels.count >= 2 ? labels[labels.count - 2] : labels[0]
        return ProviderConfig.idProblem(name) == nil ? name : "corp"
    }

    /// Questions on the terminal, each asked again (a bounded number of times) after an answer it cannot use.
    struct Asker {
        let terminal: Terminal

        /// An answer `problem` accepts (it returns nil), `default` for an empty one.
        func ask(_ label: String, default value: String? = nil, _ problem: (String) -> String?) throws(ToolFailure) -> String {
            for _ in 0..<Setup.attempts {
                let typed = try terminal.ask(label + (value.map { " [\($0)]" } ?? ""), secret: false).trimmingSpaces
                let answer = typed.isEmpty ? value ?? "" : typed
                guard let why = problem(answer) else { return answer }
                terminal.show("  expected \(why)\n")
            }
            throw ToolFailure(.usage, "setup: no usable answer to \"\(label)\"; nothing was written")
        }

        /// A number from 1 to `count`, `default` for an empty answer; returned from 0.
        func pick(_ label: String, count: Int, default value: Int) throws(ToolFailure) -> Int {
            let answer = try ask("\(label) 1-\(count)", default: String(value)) { answer in
                Int(answer).map { (1...count).contains($0) } == true ? nil : "a number from 1 to \(count)"
            }
            return Int(answer)! - 1
        }
    }
}

private extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return String(s)
    }
}
