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
import Logging

/// The one-shot commands through a socket agent (`AUTH_AGENT_SOCK`): each becomes the protocol
/// requests a host would send, so the agent's providers, flows, `gitUsername` and store (a
/// memory store too) serve them, and a login's prompts come back to this terminal.
enum RemoteTool {
    /// Seconds a request other than a login may take: the store lock and an HTTP call, as in-process.
    static let requestTimeout = 60.0

    /// Whether the command works through the agent; `config` and `git-credential configure`
    /// edit or read this machine's configuration file and never do.
    static func serves(_ action: ToolCommand.Action) -> Bool {
        switch action {
        case .config, .gitConfigure: return false
        default: return true
        }
    }

    static func perform(_ command: ToolCommand, link: AgentLink) throws(ToolFailure) -> String {
        let shape = try shapeParams(command)
        switch command.action {
        case .config, .gitConfigure:
            return ""  // never sent here (`serves`)
        case .refresh(let provider):
            let entry = try providerEntry(provider, link: link)
            let result = try link.call("refresh", accountParam(command).merging(["provider": .string(provider)]), timeout: requestTimeout)
            guard result["refreshed"] != false else { throw Tool.notRefreshed(provider, name: TerminalText.escaped(entry["displayName"]?.stringValue ?? provider)) }
            let until = result["expiresAt"]?.stringValue.map { " (token valid until \(TerminalText.escaped($0)))" } ?? ""
            Logger.stderrSink("Refreshed the token of \(TerminalText.escaped(entry["displayName"]?.stringValue ?? provider))\(until).")
            return ""
        case .status(let json):
            let status = try link.call("status", [:], timeout: requestTimeout)
            return json ? JSONSerializer.string(status) + "\n" : StatusTable.render(status, store: status["store"]?["kind"]?.stringValue ?? "-")
        case .token(let provider, let json):
            let token = try token(provider, shape, minValid: command.minValid, link: link)
            guard json else { return (token["accessToken"]?.stringValue ?? "") + "\n" }
            return JSONSerializer.string(token) + "\n"
        case .header(let url, let method):
            let signed = try sign(url, shape, method: method, link: link)
            guard let authorization = signed.authorization else {
                throw ToolFailure(.failed, "notCovered: no configured provider covers \(Origin(url: url)?.description ?? url) over https or loopback")
            }
            return "Authorization: \(authorization)\n" + (signed.proof.map { "DPoP: \($0)\n" } ?? "")
        case .fetch(let options):
            return try fetch(options, shape, link: link)
        case .logout(let provider):
            var params = accountParam(command).merging(["provider": .string(provider)])
            if command.all { params["all"] = true }
            let entry = try providerEntry(provider, link: link)
            let name = TerminalText.escaped(entry["displayName"]?.stringValue ?? provider)
            // Saying "logged out" when nobody was would hide a typo in --account, as in-process.
            let nobody = command.all ? (entry["accounts"]?.arrayValue ?? []).isEmpty
                : command.account.map { wanted in !(entry["accounts"]?.arrayValue ?? []).contains { AccountNames.matches(wanted, account: $0["id"]?.stringValue ?? "", user: $0["user"]) } }
                ?? (entry["state"] != "loggedIn")
            if nobody {
                Logger.stderrSink(command.account.map { "Account \($0) is not logged in to \(name)." } ?? "Nobody is logged in to \(name).")
                return ""
            }
            let result = try link.call("logout", params, timeout: requestTimeout)
            let what = command.all ? "every account of \(name)" : command.account.map { "\($0) of \(name)" } ?? name
            Logger.stderrSink(result["revoked"] == true ? "Logged out of \(what); the server revoked the tokens." : "Logged out of \(what).")
            return ""
        case .forget(let provider):
            let entry = try providerEntry(provider, link: link)
            let result = try link.call("forget", ["provider": .string(provider)], timeout: requestTimeout)
            let name = TerminalText.escaped(entry["displayName"]?.stringValue ?? provider)
            Logger.stderrSink("Forgot \(name) (\(provider)): logged out\(result["revoked"] == true ? ", tokens revoked" : ""), registration deleted.")
            return ""
        case .login(let provider, let username, let passwordStdin, let tokenStdin, let flow):
            let options = TerminalLogin.Options(username: username, passwordStdin: passwordStdin, tokenStdin: tokenStdin, flow: flow)
            return try login(provider, options, link: link) + "\n"
        case .gitCredential(let operation):
            return try gitCredential(operation, command, link: link)
        case .kubectlCredential(let provider):
            return try kubectlCredential(provider, shape, link: link)
        }
    }

    private static func accountParam(_ command: ToolCommand) -> JSONObject {
        command.account.map { ["account": .string($0)] } ?? [:]
    }

    /// The provider's entry in the agent's `status`; 1002 when the agent has no such provider.
    private static func providerEntry(_ id: String, link: AgentLink) throws(ToolFailure) -> JSONValue {
        let status = try link.call("status", [:], timeout: requestTimeout)
        let entries = status["providers"]?.arrayValue ?? []
        guard let entry = entries.first(where: { $0["id"]?.stringValue == id }) else {
            // The words the agent itself answers an unknown provider with, as in-process.
            throw ToolFailure(AuthError.unknownProvider(id, .notConfigured(known: entries.compactMap { $0["id"]?.stringValue })))
        }
        return entry
    }

    /// `token`, and with `--min-valid` a refresh first when the token expires sooner (naming the
    /// token that is too short-lived, so a refresh another process already made is not repeated).
    private static func token(_ provider: String, _ shape: JSONObject, minValid: Int?, link: AgentLink) throws(ToolFailure) -> JSONValue {
        var params = shape.merging(["provider": .string(provider), "bearer": true])
        if let minValid { params["minValidSeconds"] = .int(Int64(minValid)) }
        var token = try link.call("token", params, timeout: requestTimeout)
        guard let minValid else { return token }
        let name = try providerEntry(provider, link: link)["displayName"]?.stringValue ?? provider
        Tool.minValidNote(provider: TerminalText.escaped(name), seconds: minValid, expiresAt: token["expiresAt"]?.stringValue,
                          refreshed: token["refreshed"] == true).map(Logger.stderrSink)
        if case .object(var o) = token { o["refreshed"] = nil; token = .object(o) }
        return token
    }

    /// `--account`, `--scope`, `--audience`, `--resource` as the protocol's params, checked as in-process.
    private static func shapeParams(_ command: ToolCommand) throws(ToolFailure) -> JSONObject {
        var params: JSONObject = [:]
        if let account = command.account { params["account"] = .string(account) }
        if let shape = try ToolSession.shape(of: command) {
            if !shape.scopes.isEmpty { params["scopes"] = .array(shape.scopes.map { .string($0) }) }
            if let audience = shape.audience { params["audience"] = .string(audience) }
            if let resource = shape.resource { params["resource"] = .string(resource) }
        }
        return params
    }

    /// `sign` of a request to `url`: the provider that covers it, its `Authorization` and, for a
    /// DPoP provider, the proof (bound to `method` and `url`), if any.
    private static func sign(_ url: String, _ params: JSONObject, method: String = "GET", link: AgentLink) throws(ToolFailure)
        -> (provider: String?, authorization: String?, proof: String?, expiresAt: String?)
    {
        let result = try link.call("sign", params.merging(["request": ["method": .string(method), "url": .string(url)]]), timeout: requestTimeout)
        guard result["signed"] == true else { return (nil, nil, nil, nil) }
        return (result["provider"]?.stringValue, result["headers"]?["Authorization"]?.stringValue, result["headers"]?["DPoP"]?.stringValue,
                result["expiresAt"]?.stringValue)
    }

    /// The token inside a `Bearer` authorization (git and kubectl take the bare token).
    private static func bearerToken(_ authorization: String?) -> String? {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return nil }
        return String(authorization.dropFirst("bearer ".count))
    }

    private static func fetch(_ options: ToolCommand.FetchOptions, _ params: JSONObject, link: AgentLink) throws(ToolFailure) -> String {
        let request = try FetchCommand.request(options)
        var headers = JSONObject()
        for (name, value) in request.headers { headers[name] = .string(value) }
        var wire: JSONObject = ["method": .string(request.method), "url": .string(request.url), "headers": .object(headers)]
        if let body = request.body { wire["bodyBase64"] = .string(Data(body).base64EncodedString()) }
        let result = try link.call("fetch", params.merging(["request": .object(wire)]), timeout: request.timeout + requestTimeout)
        let status = Int(result["status"]?.intValue ?? 0)
        var out = [UInt8]()
        if options.include {
            var head = "HTTP/1.1 \(status)\r\n"
            let members = result["headers"]?.objectValue.map { Array($0.members) } ?? []
            for (name, value) in members.sorted(by: { $0.0 < $1.0 }) {
                head += "\(name): \(value.stringValue ?? "")\r\n"
            }
            out += Array((head + "\r\n").utf8)
        }
        if let text = result["body"]?.stringValue {
            out += Array(text.utf8)
        } else if let encoded = result["bodyBase64"]?.stringValue, let data = Data(base64Encoded: encoded) {
            out += Array(data)
        }
        StandardStream.write(out)
        if status >= 400 { throw ToolFailure(.httpError, "HTTP \(status) from \(Origin(url: options.url)?.description ?? options.url)") }
        return ""
    }

    /// `login` at this terminal through the agent: the fields its `status` lists are asked here
    /// (or read from stdin), and its `loginPrompt`s (a device code, a browser URL) shown here.
    private static func login(_ id: String, _ options: TerminalLogin.Options, link: AgentLink) throws(ToolFailure) -> String {
        if id.contains("://") { return try learn(id, options, link: link) }
        let entry = try providerEntry(id, link: link)
        let flows = (entry["flows"]?.arrayValue ?? [entry["flow"] ?? .null]).compactMap { $0.stringValue.flatMap(Flow.init(rawValue:)) }
        guard let first = flows.first else { throw ToolFailure(.failed, "the agent's status names no flow for \(id)") }
        let displayName = entry["displayName"]?.stringValue ?? id
        var provider = ProviderConfig(id: id, displayName: displayName, flow: first)
        provider.flows = flows
        // The agent's display decides (a forwarded login runs where the agent is): its `status`
        // says `device` where it prefers the device code to a browser nobody would see.
        let preferred: Flow? = entry["interactive"] == "device" && flows.contains(.deviceCode) ? .deviceCode : first
        let flow = try TerminalLogin.flow(options, provider: provider, defaultFlow: preferred)
        var params: JSONObject = ["provider": .string(id)]
        if options.choosesFlow { params["flow"] = .string(flow.rawValue) }
        // What a script gives on stdin is sent with the login; what the person types the agent asks
        // for (`loginFields`) under the provider's one-login lock, as in-process.
        if options.passwordStdin || options.tokenStdin {
            if let given = try TerminalLogin.credentials(for: provider, flow: flow, options: options) { params["credentials"] = json(given) }
        } else {
            _ = try link.call("initialize", ["protocolVersion": "1", "capabilities": ["loginFields": true]], timeout: requestTimeout)
        }
        var refusal: ToolFailure?
        // The prompt's countdown line ends (cleared) before anything else is printed.
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let result: JSONValue
        do throws(ToolFailure) {
            result = try link.call("login", params, timeout: TerminalLogin.timeout, notification: { message in
                guard message["method"]?.stringValue == AuthMethods.loginPrompt, let prompt = loginPrompt(message["params"]) else { return }
                if case .browser = prompt, let requestId = message["params"]?["requestId"] {
                    let path = link.path
                    live.acceptPaste { url in completeLogin(requestId: requestId, redirectURL: url, path: path) }
                }
                TerminalLogin.show(prompt: prompt, target: target(message["params"], displayName: displayName), live: live)
            }, answer: { request in
                guard request["method"]?.stringValue == AuthMethods.loginFields else { return nil }
                let asked: Flow = request["params"]?["fields"]?.arrayValue?.contains { $0["name"] == "token" } == true ? .token : .password
                do throws(ToolFailure) {
                    return try TerminalLogin.credentials(for: provider, flow: asked, options: options).map(json)
                } catch {
                    // The terminal's own failure (none, Ctrl-C) is what the command exits with.
                    refusal = error
                    return nil
                }
            })
        } catch {
            throw refusal ?? error
        }
        var text = "Logged in to \(TerminalText.escaped(displayName))"
        if let person = AccountNames.person(result["user"], account: result["account"]?.stringValue ?? "") { text += " as \(TerminalText.escaped(person))" }
        if let until = result["expiresAt"]?.stringValue { text += " (token valid until \(TerminalText.escaped(until)))" }
        return text + "."
    }

    /// `login URL` through the agent: `login {resource}`, the prompts naming where the person signs in.
    private static func learn(_ resource: String, _ options: TerminalLogin.Options, link: AgentLink) throws(ToolFailure) -> String {
        if options.username != nil || options.passwordStdin || options.tokenStdin {
            throw ToolFailure(.usage, "an API learned from its URL logs in with a browser or --device, not a password or token")
        }
        var params: JSONObject = ["resource": .string(resource), "openBrowser": .bool(LivePromptLine.canOpenBrowser(ProcessEnvironment.current()))]
        if let flow = options.flow { params["flow"] = .string(flow == .device ? Flow.deviceCode.rawValue : Flow.authorizationCode.rawValue) }
        let live = LivePromptLine(environment: ProcessEnvironment.current())
        defer { live.stop() }
        let result = try link.call("login", params, timeout: TerminalLogin.timeout) { message in
            guard message["method"]?.stringValue == AuthMethods.loginPrompt, let prompt = loginPrompt(message["params"]) else { return }
            TerminalLogin.show(prompt: prompt, target: target(message["params"], displayName: resource), live: live)
        }
        var text = "Logged in to \(TerminalText.escaped(resource))"
        if let person = AccountNames.person(result["user"], account: result["account"]?.stringValue ?? "") { text += " as \(TerminalText.escaped(person))" }
        if let until = result["expiresAt"]?.stringValue { text += " (token valid until \(TerminalText.escaped(until)))" }
        return text + "."
    }

    /// A redirect URL pasted at this terminal, handed to the agent's waiting login on a connection
    /// of its own (the login's waits for the login's answer); nil when taken, else why not.
    static func completeLogin(requestId: JSONValue, redirectURL: String, path: String) -> String? {
        guard let link = AgentLink.connect(path: path, naming: "AUTH_AGENT_SOCK") else { return "the agent at \(path) does not answer" }
        do throws(ToolFailure) {
            _ = try link.call("completeLogin", ["requestId": requestId, "redirectUrl": .string(redirectURL)], timeout: requestTimeout)
            return nil
        } catch {
            return error.message
        }
    }

    /// Credentials as `login`'s `credentials` and `loginFields`' answer carry them.
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

    /// A `loginPrompt` notification's params as the prompt the terminal login shows.
    static func loginPrompt(_ params: JSONValue?) -> LoginPrompt? {
        let expiresAt = params?["expiresAt"]?.stringValue.flatMap(RFC3339.parse) ?? Date()
        if let code = params?["userCode"]?.stringValue, let uri = params?["verificationUri"]?.stringValue {
            return .deviceCode(userCode: code, verificationURI: uri, verificationURIComplete: params?["verificationUriComplete"]?.stringValue, expiresAt: expiresAt)
        }
        if let url = params?["url"]?.stringValue { return .browser(url: url, expiresAt: expiresAt) }
        return nil
    }

    /// git's helper through the agent: `sign`'s rule picks the provider of git's origin, the
    /// agent's status gives its accounts and `gitUsername`.
    private static func gitCredential(_ operation: String, _ command: ToolCommand, link: AgentLink) throws(ToolFailure) -> String {
        var lines: [String] = []
        while let line = readLine(strippingNewline: true), !line.isEmpty { lines.append(line) }
        let request = GitCredential.parse(lines)
        guard operation == "get" || operation == "erase", let origin = GitCredential.origin(request) else { return "" }
        let url = origin.description
        do throws(ToolFailure) {
            guard let provider = try sign(url, [:], link: link).provider else { return "" }
            let status = try link.call("status", [:], timeout: requestTimeout)
            let entry = status["providers"]?.arrayValue?.first { $0["id"]?.stringValue == provider }
            let named = command.account ?? request["username"].flatMap { username in
                entry?["accounts"]?.arrayValue?.first { AccountNames.matches(username, account: $0["id"]?.stringValue ?? "", user: $0["user"]) }?["id"]?.stringValue
            }
            var params: JSONObject = [:]
            if let named { params["account"] = .string(named) }
            if operation == "erase" {
                guard let password = request["password"] else { return "" }
                params["provider"] = .string(provider)
                params["failedAuthorization"] = .string(password)
                _ = try link.call("refresh", params, timeout: requestTimeout)
                return ""
            }
            let signed = try sign(url, params, link: link)
            guard let token = bearerToken(signed.authorization) else {
                // Not a bearer token (DPoP): the core says why git cannot be given it.
                _ = try link.call("token", params.merging(["provider": .string(provider), "bearer": true]), timeout: requestTimeout)
                return ""
            }
            let username = named.flatMap { _ in request["username"] } ?? entry?["gitUsername"]?.stringValue ?? GitCredential.defaultUsername
            guard let text = GitCredential.answer(username: username, token: token, expiresAt: signed.expiresAt.flatMap(RFC3339.parse)) else {
                throw ToolFailure(.failed, "the token or gitUsername of \(provider) holds a line break; git cannot be given it")
            }
            return text
        } catch where error.needsLogin {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message)) run: auth-agent login\(error.provider.map { " \($0)" } ?? "")")
            return ""
        }
    }

    /// kubectl's exec plugin through the agent: the token `sign` gives for the cluster's server
    /// (refused when the provider does not cover it), or the provider's own without cluster info;
    /// an interactive kubectl gets a login at its terminal when none is there.
    private static func kubectlCredential(_ provider: String, _ params: JSONObject, link: AgentLink) throws(ToolFailure) -> String {
        let info = try KubectlCredential.execInfo(ProcessEnvironment.current()["KUBERNETES_EXEC_INFO"], stdinIsTerminal: isatty(0) == 1)
        func credential() throws(ToolFailure) -> String {
            if let server = info.server {
                let signed = try link.call("sign", params.merging(["provider": .string(provider), "request": ["method": "GET", "url": .string(server)]]),
                                           timeout: requestTimeout)
                guard signed["signed"] == true else { throw ToolFailure(.failed, "originNotAllowed: \(provider) does not cover the cluster \(server)") }
                guard let token = bearerToken(signed["headers"]?["Authorization"]?.stringValue) else {
                    // Not a bearer token (DPoP): the core says why kubectl cannot be given it.
                    _ = try link.call("token", params.merging(["provider": .string(provider), "bearer": true]), timeout: requestTimeout)
                    throw ToolFailure(.failed, "\(provider) signed the cluster's requests with something other than a bearer token")
                }
                return KubectlCredential.execCredential(apiVersion: info.apiVersion, token: token, expiresAt: signed["expiresAt"]?.stringValue)
            }
            let token = try link.call("token", params.merging(["provider": .string(provider), "bearer": true]), timeout: requestTimeout)
            return KubectlCredential.execCredential(apiVersion: info.apiVersion, token: token["accessToken"]?.stringValue ?? "", expiresAt: token["expiresAt"]?.stringValue)
        }
        do {
            return try credential()
        } catch where error.needsLogin {
            guard info.interactive else { throw ToolFailure(.failed, "\(error.message) run: auth-agent login \(provider)") }
        }
        Logger.stderrSink(try login(provider, .init(), link: link))
        return try credential()
    }
}

extension JSONObject {
    /// These members with `other`'s added (`other` wins).
    fileprivate func merging(_ other: JSONObject) -> JSONObject {
        var merged = self
        for (key, value) in other.members { merged[key] = value }
        return merged
    }
}
