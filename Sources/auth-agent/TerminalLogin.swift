#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking
import Logging

/// `auth-agent login`: a login for a person at a terminal, or a script (`--password-stdin`,
/// `--token-stdin`), through the agent's `login`; and the terminal as the presenter of logins —
/// the prompts shown, a redirect pasted back, the fields asked — for the command line and the bridge.
enum TerminalLogin {
    struct Options: Equatable, Sendable {
        var username: String?
        var passwordStdin = false
        var tokenStdin = false
        var flow: ToolCommand.LoginFlow?
        /// `--as NAME`: the id an API learned from its URL gets.
        var name: String?

        /// Whether a flag chose the flow; when none did, the agent's core chooses it (the device
        /// code over SSH only where the server offers one), so `login` is sent naming no flow.
        var choosesFlow: Bool { flow != nil || passwordStdin || username != nil || tokenStdin }
    }

    /// An interactive login (a device code or a browser) waits for the user this long at most.
    static let timeout = 15.0 * 60

    /// `login PROVIDER` or `login URL` at this terminal, through the agent's `login`: the flow the
    /// options choose among those its `status` lists, a script's credentials from stdin sent with
    /// it, the fields a person types asked by the agent (`loginFields`, under the provider's
    /// one-login lock: a parallel helper waits for this answer instead of asking again), and its
    /// prompts shown here (`loginPrompt`, `loginWaiting`). Returns the line that says who logged in.
    static func login(_ id: String, _ options: Options, link: AgentLink) throws(ToolFailure) -> String {
        let environment = ProcessEnvironment.current()
        if id.contains("://") {
            if options.username != nil || options.passwordStdin || options.tokenStdin {
                throw ToolFailure(.usage, "an API learned from its URL logs in with a browser or --device, not a password or token")
            }
            let flow: Flow? = options.flow.map { $0 == .device ? .deviceCode : .authorizationCode }
            let live = LivePromptLine(environment: environment)
            defer { live.stop() }
            let result = try link.call(LoginMethod.self, .init(.resource(id), flow: flow, openBrowser: LivePromptLine.canOpenBrowser(environment), name: options.name),
                                       timeout: timeout, notification: prompts(live, displayName: id, link: link))
            return loggedIn(result, displayName: id)
        }
        let entry = try Tool.entry(id, link)
        let flows = entry.flows
        guard let first = flows.first else { throw ToolFailure(.failed, "the agent's status names no flow for \(id)") }
        var provider = ProviderConfig(id: id, displayName: entry.displayName, flow: first)
        provider.flows = flows
        // The agent's display decides (a forwarded login runs where the agent is): its `status`
        // says `device` where it prefers the device code to a browser nobody would see.
        let flow = try Self.flow(options, provider: provider, defaultFlow: entry.interactive == "device" && flows.contains(.deviceCode) ? .deviceCode : first)
        var params = LoginMethod.Params(.provider(id), flow: options.choosesFlow ? flow : nil)
        if options.passwordStdin || options.tokenStdin {
            params.credentials = try credentials(for: provider, flow: flow, options: options)
        } else {
            try link.initialize(capabilities: ["loginFields": true])
        }
        var refusal: ToolFailure?
        // The prompt's countdown line ends (cleared) before anything else is printed.
        let live = LivePromptLine(environment: environment)
        defer { live.stop() }
        do throws(ToolFailure) {
            let result = try link.call(LoginMethod.self, params, timeout: timeout, notification: prompts(live, displayName: entry.displayName, link: link),
                                       answer: { request in
                guard request["method"]?.stringValue == AuthMethods.loginFields else { return nil }
                let asked: Flow = request["params"]?["fields"]?.arrayValue?.contains { $0["name"] == "token" } == true ? .token : .password
                do throws(ToolFailure) {
                    return try credentials(for: provider, flow: asked, options: options).map(json)
                } catch {
                    // The terminal's own failure (none, Ctrl-C) is what the command exits with.
                    refusal = error
                    return nil
                }
            })
            return loggedIn(result, displayName: entry.displayName)
        } catch {
            throw refusal ?? error
        }
    }

    /// What a login's notifications show at this terminal: its prompt (a browser's redirect may be
    /// pasted back here, handed to the agent on a connection of its own while this one waits) and
    /// word of another login it waits for. `fetch` with a login shows the same.
    static func prompts(_ live: LivePromptLine, displayName: String, link: AgentLink) -> (JSONValue) -> Void {
        { message in
            let params = message["params"]
            switch message["method"]?.stringValue {
            case AuthMethods.loginWaiting?:
                if let text = params?["message"]?.stringValue { sayWaiting(TerminalText.escaped(text)) }
            case AuthMethods.loginPrompt?:
                guard let prompt = loginPrompt(params) else { return }
                if case .browser = prompt, let requestId = params?["requestId"] {
                    let agent = link.agent
                    live.acceptPaste { url in completeLogin(requestId: requestId, redirectURL: url, agent: agent) }
                }
                show(prompt: prompt, target: target(params, displayName: displayName), live: live)
            default: break
            }
        }
    }

    /// A redirect URL pasted at this terminal, handed to the agent's waiting login; nil when taken, else why not.
    static func completeLogin(requestId: JSONValue, redirectURL: String, agent: AgentLink.Agent) -> String? {
        guard let other = AgentLink.another(agent) else { return "the agent does not answer" }
        do throws(ToolFailure) {
            try other.call(CompleteLoginMethod.self, .init(requestId: requestId, redirectUrl: redirectURL))
            return nil
        } catch {
            // The refusal said to the person, not to a program: without the protocol's framing of the param.
            let framing = "Invalid params: 'redirectUrl': "
            return error.message.hasPrefix(framing) ? String(error.message.dropFirst(framing.count)) : error.message
        }
    }

    /// Credentials as `loginFields`' answer carries them.
    static func json(_ credentials: Credentials) -> JSONValue {
        switch credentials {
        case .token(let token): return ["token": .string(token)]
        case .password(let username, let password): return ["username": .string(username), "password": .string(password)]
        }
    }

    /// What a `loginPrompt` notification's params say the login is for.
    static func target(_ params: JSONValue?, displayName: String) -> LoginTarget {
        LoginTarget(provider: params?["provider"]?.stringValue ?? "", displayName: displayName,
                    resource: params?["resource"]?.stringValue, authorizationServer: params?["authorizationServer"]?.stringValue)
    }

    /// A `loginPrompt` notification's params as the prompt the terminal shows.
    static func loginPrompt(_ params: JSONValue?) -> LoginPrompt? {
        let expiresAt = params?["expiresAt"]?.stringValue.flatMap(RFC3339.parse) ?? Date()
        if let code = params?["userCode"]?.stringValue, let uri = params?["verificationUri"]?.stringValue {
            return .deviceCode(userCode: code, verificationURI: uri, verificationURIComplete: params?["verificationUriComplete"]?.stringValue, expiresAt: expiresAt)
        }
        if let url = params?["url"]?.stringValue { return .browser(url: url, expiresAt: expiresAt) }
        return nil
    }

    /// The terminal as a login's presenter — for `login`, `login URL`, kubectl's plugin and the MCP
    /// bridge alike: the prompt on stderr and the controlling terminal, naming what it is for
    /// (`LoginTarget.name`: the provider, or a learned API's resource and where the person signs
    /// in); a browser login's redirect pasted back there; word of a login it waits for; the fields
    /// a flow needs asked there (`askFields`). `openBrowser` nil: the provider's configuration.
    static func presenter(_ live: LivePromptLine, openBrowser: Bool? = nil,
                          askFields: (@Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials)? = nil) -> LoginContext {
        LoginContext(openBrowser: openBrowser, prompt: { show(prompt: $0, target: $1, live: live) },
                     acceptPaste: { paste in live.acceptPaste { paste.complete($0) } }, waiting: sayWaiting, askFields: askFields)
    }

    /// The fields a flow needs, asked at the terminal (the bridge's logins, which run in this
    /// process's core); the terminal's own failure (none, Ctrl-C) cancels the login.
    static func askAtTerminal(_ options: Options) -> @Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials {
        { config, flow throws(AuthError) in
            guard let asked = try? credentials(for: config, flow: flow, options: options) else { throw AuthError.loginCancelled(config) }
            return asked
        }
    }

    /// What the person at the terminal is told while the login waits for another one.
    static let sayWaiting: @Sendable (String) -> Void = { Logger.stderrSink("auth-agent: " + $0) }

    /// The flow the options choose among the provider's: `--device` deviceCode, `--browser`
    /// token; none of them, the provider's default (`defaultFlow`: the agent's, through a socket
    /// agent, whose display decides; else `ProviderConfig.defaultFlow`). A flow the provider lacks is exit 2.
    static func flow(_ options: Options, provider: ProviderConfig, defaultFlow: Flow? = nil) throws(ToolFailure) -> Flow {
        let flows = provider.flows
        func pick(_ flag: String, _ wanted: [Flow]) throws(ToolFailure) -> Flow {
            guard let flow = wanted.first(where: flows.contains) else {
                let names = wanted.map(\.rawValue).joined(separator: " or ")
                throw ToolFailure(.usage, "\(flag): \(provider.displayName) has no \(names) login; its flow\(flows.count > 1 ? "s" : ""): \(provider.flowNames)")
            }
            return flow
        }
        var asked: [(flag: String, flows: [Flow])] = []
        switch options.flow {
        case .device?: asked.append(("--device", [.deviceCode]))
        case .browser?: asked.append(("--browser", [.authorizationCode]))
        case nil: break
        }
        if options.passwordStdin || options.username != nil { asked.append((options.passwordStdin ? "--password-stdin" : "--username", [.password, .session])) }
        if options.tokenStdin { asked.append(("--token-stdin", [.token])) }
        guard asked.count <= 1 else { throw ToolFailure(.usage, "\(asked[0].flag) and \(asked[1].flag) choose different ways to log in") }
        guard let (flag, wanted) = asked.first else { return defaultFlow ?? provider.defaultFlow() }
        return try pick(flag, wanted)
    }

    /// The provider's `fields` from stdin (scripts) or asked on the terminal (people); nil for
    /// flows that ask nothing here (device code, browser, client credentials).
    static func credentials(for provider: ProviderConfig, flow: Flow, options: Options) throws(ToolFailure) -> Credentials? {
        switch flow {
        case .token:
            if options.tokenStdin { return .token(try secretFromStdin("--token-stdin")) }
            return .token(try terminal().ask("\(provider.displayName) token", secret: true))
        case .password, .session:
            let tty = options.username == nil || !options.passwordStdin ? try terminal() : nil
            var username = options.username ?? ""
            if options.username == nil { username = try tty!.ask("\(provider.displayName) username", secret: false) }
            let password: String
            if options.passwordStdin { password = try secretFromStdin("--password-stdin") } else { password = try tty!.ask("Password", secret: true) }
            return .password(username: username, password: password)
        default:
            return nil
        }
    }

    private static func terminal() throws(ToolFailure) -> Terminal {
        guard let tty = Terminal.controlling() else {
            throw ToolFailure(.usage, "no terminal to ask on; use --username with --password-stdin, or --token-stdin")
        }
        return tty
    }

    /// The first line of stdin (a password or token piped in, never in argv).
    static func secretFromStdin(_ flag: String) throws(ToolFailure) -> String {
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw ToolFailure(.usage, "\(flag): nothing on stdin")
        }
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }

    /// The `loginPrompt` contents for the person: on stderr, and on the terminal too when stderr
    /// goes elsewhere (a tool that hides its helper's stderr must not hide the device code).
    /// On a terminal a live line follows (a countdown, and Enter opens the browser where one
    /// can be); elsewhere the expiry is said once.
    static func show(prompt: LoginPrompt, target: LoginTarget, live: LivePromptLine) {
        let displayName = target.name
        let text = promptText(prompt, displayName: displayName)
        guard isatty(2) == 0 else {
            Logger.stderrSink(live.acceptsPaste ? promptText(prompt, displayName: displayName, paste: true) : text)
            live.start(prompt, fd: 2) { url in BrowserLauncher().open(checked: url) }
            return
        }
        let once = text + "\n" + LivePromptLine.onceText(prompt, now: Date())
        Logger.stderrSink(once)
        if let tty = Terminal.controlling() {
            tty.show(once + "\n")
            close(tty.fd)
        }
    }

    /// Said under a browser login's URL where the terminal takes the redirect pasted back.
    static let pasteHint = "If the browser cannot reach this machine, paste here the whole address it ends at (http://127.0.0.1:…/callback?…) and press Enter."

    /// The code and addresses come from the authorization server: shown escaped (`TerminalText`).
    /// - Parameter paste: the terminal takes a browser login's redirect pasted back (`pasteHint`).
    static func promptText(_ prompt: LoginPrompt, displayName: String, paste: Bool = false) -> String {
        let (e, name) = (TerminalText.escaped, TerminalText.escaped(displayName))
        switch prompt {
        case .deviceCode(let code, let uri, let complete, _):
            var text = "To log in to \(name), open \(e(uri)) and enter the code \(e(code))"
            if let complete { text += "\n  (or open \(e(complete)))" }
            return text + "\nWaiting for the approval… (Ctrl-C cancels)"
        case .browser(let url, _):
            return "To log in to \(name), open this URL in a browser:\n  \(e(url))\n" + (paste ? pasteHint + "\n" : "") + "Waiting for the browser… (Ctrl-C cancels)"
        }
    }

    /// `Logged in to Corp SSO as alice (token valid until …).`: the person's name, else the
    /// account's id (nothing for the one account of a flow that learns nothing about its user).
    static func loggedIn(_ result: LoginResult, displayName: String) -> String {
        var text = "Logged in to \(TerminalText.escaped(displayName))"
        if let person = AccountNames.person(result.user, account: result.account) { text += " as \(TerminalText.escaped(person))" }
        if let until = result.expiresAt { text += " (token valid until \(RFC3339.format(until)))" }
        return text + "."
    }
}
