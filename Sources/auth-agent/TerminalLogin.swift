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
/// `--token-stdin`), through the same `AuthService.beginLogin` the protocol's `login` uses.
enum TerminalLogin {
    struct Options: Equatable, Sendable {
        var username: String?
        var passwordStdin = false
        var tokenStdin = false
        var flow: ToolCommand.LoginFlow?

        /// Whether a flag chose the flow; when none did, the agent's core chooses it (the device
        /// code over SSH only where the server offers one), so `login` is sent naming no flow.
        var choosesFlow: Bool { flow != nil || passwordStdin || username != nil || tokenStdin }
    }

    /// An interactive login (a device code or a browser) waits for the user this long at most.
    static let timeout = 15.0 * 60

    /// Logs in; returns the `login` result. Parallel helpers wait for one another's login rather
    /// than prompting again: the core runs one interactive login per provider (`AuthService.oneLogin`).
    static func run(_ session: ToolSession, provider id: String, options: Options) throws(ToolFailure) -> LoginResult {
        if id.contains("://") { return try learn(session, resource: id, options: options) }
        let provider = try session.provider(id)
        let flow = try flow(options, provider: provider)
        // What a script gives on stdin is read now; what the person types is asked by the core,
        // under the provider's one-login lock (a parallel helper waits for this answer instead).
        let scripted = options.passwordStdin || options.tokenStdin
        let credentials = scripted ? try credentials(for: provider, flow: flow, options: options) : nil
        let refusal = Locked<ToolFailure?>(nil)
        let ask: @Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials = { config, chosen throws(AuthError) in
            let asked: Credentials?
            do throws(ToolFailure) { asked = try Self.credentials(for: config, flow: chosen, options: options) } catch {
                // The terminal's own failure (none, Ctrl-C) is what the command exits with.
                refusal.withLock { $0 = error }
                throw AuthError.loginCancelled(config)
            }
            guard let asked else { throw AuthError.loginCancelled(config) }
            return asked
        }
        // The prompt's countdown line ends (cleared) before anything else is printed.
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let context = presenter(live, askFields: scripted ? nil : ask)
        let service = session.service
        do throws(ToolFailure) {
            return try ToolSession.wait(timeout: timeout) { () async throws(AuthError) in
                try await service.login(provider: id, flow: options.choosesFlow ? flow : nil, credentials: credentials, context: context)
            }
        } catch {
            throw refusal.current ?? error
        }
    }

    /// `auth-agent login URL`: learns the API at URL (unless learned already) and logs in, by
    /// browser (opened where a display exists) or, with `--device`, the device flow.
    static func learn(_ session: ToolSession, resource: String, options: Options) throws(ToolFailure) -> LoginResult {
        if options.username != nil || options.passwordStdin || options.tokenStdin {
            throw ToolFailure(.usage, "an API learned from its URL logs in with a browser or --device, not a password or token")
        }
        let flow: Flow? = options.flow == .device ? .deviceCode : options.flow == .browser ? .authorizationCode : nil
        // One learning login per API across processes is the core's (`AuthService.learn`): the
        // registered redirect port is one, and a login that waited finds the provider learned.
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let service = session.service
        return try ToolSession.wait(timeout: timeout) { () async throws(AuthError) in
            try await service.login(resource: resource, flow: flow, context: presenter(live, openBrowser: LivePromptLine.canOpenBrowser(ProcessEnvironment.current())))
        }
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

    /// `Logged in to Corp SSO as alice (until …).`: the person's name, else the account's id
    /// (nothing for the one account of a flow that learns nothing about its user).
    static func loggedIn(_ result: LoginResult, session: ToolSession) -> String {
        let name = (session.config.providers.first { $0.id == result.provider } ?? session.service.providerConfig(result.provider))?.displayName ?? result.provider
        var text = "Logged in to \(name)"
        if let person = AccountNames.person(result.user, account: result.account) { text += " as \(TerminalText.escaped(person))" }
        if let until = result.expiresAt { text += " (token valid until \(RFC3339.format(until)))" }
        return text + "."
    }
}
