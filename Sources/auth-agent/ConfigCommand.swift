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
        "no configuration at \(path). Add a provider with 'auth-agent config add ID --issuer URL --client-id ID --origin URL'"
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
            let provider = try add(draft, logger: logger)
            try write(try edit { () throws(ConfigError) in try ConfigFile.adding(provider, to: existing, file: path) }, to: path)
            Logger.stderrSink("Added \(draft.id) to \(path). Log in with: auth-agent login \(draft.id)")
            return ""
        }
    }

    /// Discovers the issuer's endpoints, shows them, checks them against the flows, and builds the provider object.
    static func add(_ draft: ToolCommand.ProviderDraft, logger: Logger) throws(ToolFailure) -> JSONObject {
        var flows: [Flow] = []
        for name in draft.flows {
            guard let flow = Flow(rawValue: name), ![Flow.session, .token].contains(flow) else {
                throw ToolFailure(.usage, "--flow \(name): expected authorizationCode, deviceCode, password or clientCredentials")
            }
            flows.append(flow)
        }
        let secret = draft.clientSecretStdin ? try TerminalLogin.secretFromStdin("--client-secret-stdin") : nil
        let transport = LoggingTransport.wrapping(SystemHTTPTransport(), logger: logger)
        let issuer = draft.issuer
        let found = try Blocking.wait(timeout: 30) { () async throws(AuthError) in
            try await IssuerEndpoints.discover(issuer: issuer, transport: transport)
        }
        let width = (found.endpoints.map(\.name.count).max() ?? 0) + 2
        Logger.stderrSink("Discovered at \(issuer):\n" + found.endpoints.map { "  \($0.name.padding(width))\($0.url)" }.joined(separator: "\n"))
        if let problem = found.problems.first { throw ToolFailure(.failed, "the issuer's endpoints cannot be used: \(problem)") }
        if flows.isEmpty {
            guard let flow = found.defaultFlow else {
                throw ToolFailure(.failed, "\(issuer) names no authorization or device authorization endpoint; give --flow password or clientCredentials")
            }
            flows = [flow]
        }
        for flow in flows where !found.supports(flow) {
            throw ToolFailure(.failed, "\(issuer) does not name the endpoints the \(flow.rawValue) flow needs")
        }
        var provider: JSONObject = ["id": .string(draft.id)]
        if let name = draft.displayName { provider["displayName"] = .string(name) }
        provider["flow"] = flows.count == 1 ? .string(flows[0].rawValue) : .array(flows.map { .string($0.rawValue) })
        provider["origins"] = .array(draft.origins.map { .string($0) })
        provider["issuer"] = .string(issuer)
        provider["clientId"] = .string(draft.clientId)
        if let secret { provider["clientSecret"] = .string(secret) }
        if !draft.scopes.isEmpty { provider["scopes"] = .array(draft.scopes.map { .string($0) }) }
        return provider
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
