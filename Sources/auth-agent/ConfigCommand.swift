#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import JSON
import JSONRPC
import Logging

/// `auth-agent config path|check|add|remove|set`: the configuration file from the command line, so a
/// first run needs no hand-written JSON. They work on the file alone (no store is opened).
enum ConfigCommand {
    /// What a first run without a configuration is told, wherever it notices.
    static func noConfiguration(_ path: String) -> String {
        (access(path, F_OK) == 0 ? "no provider in \(path) yet." : "no configuration at \(path).")
            + " Run 'auth-agent setup' to be asked what to sign in to, add a provider with 'auth-agent config add ID --issuer URL --client-id ID --origin URL'"
            + " (see 'auth-agent help config add'), or try the agent with 'auth-agent demo'."
    }

    static func run(_ action: ToolCommand.ConfigAction, command: ToolCommand) throws(ToolFailure) -> String {
        let path = AgentConfig.resolvePath(argument: command.configPath, environment: ProcessEnvironment.current())
        let existing = try read(path)
        switch action {
        case .path:
            return path + "\n"
        case .check:
            guard existing != nil else { throw ToolFailure(.usage, noConfiguration(path)) }
            let config: AgentConfig
            do { config = try AgentConfig.load(path: path) } catch { throw ToolFailure(.usage, "invalid configuration: \(error)") }
            if let warning = config.warning { Logger.stderrSink("auth-agent: warning: " + warning) }
            return "\(path): valid, \(config.providers.count) provider\(config.providers.count == 1 ? "" : "s")"
                + (config.providers.isEmpty ? "" : " (\(config.providers.map(\.id).joined(separator: ", ")))") + "\n"
        case .remove(let id):
            guard let existing else { throw ToolFailure(.usage, noConfiguration(path)) }
            try write(try edit { () throws(ConfigError) in try ConfigFile.removing(id, from: existing, file: path) }, to: path)
            Logger.stderrSink("Removed \(id) from \(path). Sessions it left in the store stay until they expire; 'auth-agent logout \(id)' before removing ends them.")
            return ""
        case .set(let id, let key, let values):
            guard let existing else { throw ToolFailure(.usage, noConfiguration(path)) }
            try write(try edit { () throws(ConfigError) in try ConfigFile.setting(key, to: values, provider: id, in: existing, file: path) }, to: path)
            Logger.stderrSink("Set \(key) of \(id) in \(path).")
            return ""
        case .add(let draft):
            let logger = Logger(level: command.logLevel)
            var provider = try add(draft, logger: logger)
            // A generated key goes to the keyring where one answers, else to a 0600 file beside the configuration.
            let noKeyring = draft.generateKey ? ClientKeyring.unavailable() : nil
            let keyPath = noKeyring == nil ? ClientAuthConfig.keyring : keyFile(for: draft.id, config: path)
            if draft.generateKey {
                provider["clientAuth"] = ["method": "private_key_jwt", "key": .string(keyPath), "alg": "ES256"]
            }
            // Checked before a key is made: nothing is left behind when the result would be invalid.
            var bytes = try edit { () throws(ConfigError) in try ConfigFile.adding(provider, to: existing, file: path) }
            guard draft.generateKey else {
                try write(bytes, to: path)
                Logger.stderrSink("Added \(draft.id) to \(path). Log in with: auth-agent login \(draft.id)")
                return ""
            }
            let made: (jwk: String, kid: String)
            switch noKeyring == nil ? ClientKeyFile.generate(inKeyringFor: draft.id) : ClientKeyFile.generate(at: keyPath) {
            case .failure(let problem): throw ToolFailure(.failed, problem.description)
            case .success(let key): made = key
            }
            provider["clientAuth"] = ["method": "private_key_jwt", "key": .string(keyPath), "alg": "ES256", "kid": .string(made.kid)]
            bytes = try edit { () throws(ConfigError) in try ConfigFile.adding(provider, to: existing, file: path) }
            try write(bytes, to: path)
            let kept = noKeyring.map { "its private key in \(keyPath) (0600: \($0))" } ?? "its private key in the keyring"
            Logger.stderrSink("Added \(draft.id) to \(path), \(kept). Register this public key (JWK) as the client's key at the server, then log in with: auth-agent login \(draft.id)")
            return made.jwk + "\n"
        }
    }

    /// Discovers the issuer's endpoints, shows them, checks them against the flows, and builds the provider object.
    static func add(_ draft: ToolCommand.ProviderDraft, logger: Logger) throws(ToolFailure) -> JSONObject {
        let secret = draft.clientSecretStdin ? try TerminalLogin.secretFromStdin("--client-secret-stdin") : nil
        return try provider(draft, found: try discover(draft.issuer, profiles: draft.profiles, logger: logger), secret: secret)
    }

    /// The issuer's discovery document (where `profiles` say it is; a profile's fixed endpoints
    /// need none), its endpoints shown on stderr; refused when one cannot be used.
    static func discover(_ issuer: String, profiles: [String] = [], logger: Logger) throws(ToolFailure) -> IssuerEndpoints {
        let transport = LoggingTransport.wrapping(SystemHTTPTransport(), logger: logger)
        let found = try Blocking.wait(timeout: 30) { () async throws(AuthError) in
            try await IssuerEndpoints.discover(issuer: issuer, profiles: profiles, transport: transport)
        }
        let width = (found.endpoints.map(\.name.count).max() ?? 0) + 2
        Logger.stderrSink((issuer.isEmpty ? "The profile's endpoints:\n" : "Discovered at \(issuer):\n")
            + found.endpoints.map { "  \($0.name.padding(width))\($0.url)" }.joined(separator: "\n"))
        if let problem = found.problems.first { throw ToolFailure(.failed, "the issuer's endpoints cannot be used: \(problem)") }
        return found
    }

    /// The flow a provider gets when none is named: the device code where it is offered and no
    /// browser can be opened here (over SSH, no display), else the browser's.
    static func preferredFlow(_ found: IssuerEndpoints, environment: [String: String] = ProcessEnvironment.current()) -> Flow? {
        if found.supports(.deviceCode) && !LivePromptLine.canOpenBrowser(environment) { return .deviceCode }
        return found.defaultFlow
    }

    /// Writes the provider the answers describe, checked as `config add` checks it (`setup`).
    static func write(_ draft: ToolCommand.ProviderDraft, found: IssuerEndpoints, secret: String?, path: String, logger: Logger) throws(ToolFailure) {
        let entry = try provider(draft, found: found, secret: secret)
        let existing = try read(path)
        try write(try edit { () throws(ConfigError) in try ConfigFile.adding(entry, to: existing, file: path) }, to: path)
    }

    /// The provider object for `draft`, its flows checked against what the issuer offers.
    private static func provider(_ draft: ToolCommand.ProviderDraft, found: IssuerEndpoints, secret: String?) throws(ToolFailure) -> JSONObject {
        var flows: [Flow] = []
        for name in draft.flows {
            guard let flow = Flow(rawValue: name), ![Flow.session, .token].contains(flow) else {
                throw ToolFailure(.usage, "--flow \(name): expected authorizationCode, deviceCode, password or clientCredentials")
            }
            flows.append(flow)
        }
        let issuer = draft.issuer
        // A provider profile's own flows are left to it (GitHub: the device flow).
        if flows.isEmpty, found.profileFlows == nil {
            guard let flow = preferredFlow(found) else {
                throw ToolFailure(.failed, "\(issuer) names no authorization or device authorization endpoint; give --flow password or clientCredentials")
            }
            flows = [flow]
        }
        for flow in flows where !found.supports(flow) {
            throw ToolFailure(.failed, "\(issuer) does not name the endpoints the \(flow.rawValue) flow needs")
        }
        var provider: JSONObject = ["id": .string(draft.id)]
        if let name = draft.displayName { provider["displayName"] = .string(name) }
        if !flows.isEmpty { provider["flow"] = flows.count == 1 ? .string(flows[0].rawValue) : .array(flows.map { .string($0.rawValue) }) }
        provider["origins"] = .array(draft.origins.map { .string($0) })
        if !issuer.isEmpty { provider["issuer"] = .string(issuer) }
        provider["clientId"] = .string(draft.clientId)
        if let secret { provider["clientSecret"] = .string(secret) }
        if !draft.scopes.isEmpty { provider["scopes"] = .array(draft.scopes.map { .string($0) }) }
        if !draft.profiles.isEmpty { provider["profile"] = draft.profiles.count == 1 ? .string(draft.profiles[0]) : .array(draft.profiles.map { .string($0) }) }
        return provider
    }

    /// Where `--generate-key` keeps provider `id`'s key: beside the configuration file, `ID.client-key.pem`.
    static func keyFile(for id: String, config path: String) -> String {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        return directory + "/" + id + ".client-key.pem"
    }

    /// The file's bytes, nil when there is no file yet.
    private static func read(_ path: String) throws(ToolFailure) -> [UInt8]? {
        guard access(path, F_OK) == 0 else { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0, let bytes = StandardStream.readAll(fd) else {
            throw ToolFailure(.usage, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        close(fd)
        return bytes
    }

    private static func edit(_ change: () throws(ConfigError) -> [UInt8]) throws(ToolFailure) -> [UInt8] {
        do { return try change() } catch { throw ToolFailure(.usage, "invalid configuration: \(error)") }
    }

    private static func write(_ bytes: [UInt8], to path: String) throws(ToolFailure) {
        do { try ConfigFile.write(bytes, to: path) } catch { throw ToolFailure(.usage, "\(error)") }
    }
}

private extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(1, width - count)) }
}
