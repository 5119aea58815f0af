import AuthCore
import DevIssuer
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON
import JSONRPC
import Locking
import Logging

/// Wires the engine, the auth core and stdio together: the only file that
/// knows all three.
enum Agent {
    static func run(_ arguments: Arguments) -> Never {
        let logger = Logger(level: arguments.logLevel)
        switch arguments.command {
        case .devIssuer: runDevIssuer(arguments, logger: logger)
        case .connect: Relay.run(arguments, logger: logger)
        case .demo:
            let (config, issuers) = Demo.start(logger: logger)
            withExtendedLifetime(issuers) { serve(arguments, config: config, configFile: "(demo)", logger: logger) }
        default:
            if arguments.stop { SocketAgent.stop(logger: logger) }
            let (config, path) = loadConfig(arguments, logger: logger)
            serve(arguments, config: config, configFile: path, logger: logger)
        }
    }

    /// The configuration file, or none on a first run without one; exits 2 on an invalid file.
    /// - Parameter hint: say on stderr, when there is no file, where it goes and how to start
    ///   (the one-shot commands say it themselves, where it matters to them).
    static func loadConfig(_ arguments: Arguments, logger: Logger, hint: Bool = true) -> (AgentConfig, String) {
        let environment = ProcessEnvironment.current()
        let path = AgentConfig.resolvePath(argument: arguments.configPath, environment: environment)
        // Empty counts as unset, as in `resolvePath`.
        let explicit = arguments.configPath != nil || environment["AUTH_AGENT_CONFIG"].map { !$0.isEmpty } == true
        if access(path, F_OK) != 0 && errno == ENOENT {
            // No configuration yet is a normal first run: serve no providers and say where the file goes and how to start.
            // A file named explicitly must exist.
            guard explicit else {
                if hint { logger.warn(ConfigCommand.noConfiguration(path) + " Serving no providers.") }
                return (AgentConfig(), path)
            }
            Logger.stderrSink("auth-agent: " + ConfigCommand.noConfiguration(path))
            exit(2)
        }
        do {
            let config = try AgentConfig.load(path: path)
            if let warning = config.warning { logger.warn(warning) }
            return (config, path)
        } catch {
            Logger.stderrSink("auth-agent: invalid configuration: \(error)")
            exit(2)
        }
    }

    static func serve(_ arguments: Arguments, config: AgentConfig, configFile: String, logger: Logger) -> Never {
        if let socket = arguments.socket { SocketAgent.serve(socket, arguments, config: config, configFile: configFile, logger: logger) }
        let (store, storeStatus) = openStore(config, logger: logger)
        let subscriptions = Subscriptions()
        let service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(),
                                  logger: logger, lockTimeout: config.lockTimeoutSeconds, events: { subscriptions.deliver($0) })
        let (registry, options) = methods(service)
        // Before exiting, a refresh the server may already have answered is waited for and persisted.
        // Once: a closed stdout and the end of input can both end the process, and exit(3) must not
        // run on two threads at once.
        let leaving = Locked(false)
        let leave: @Sendable (Int32) -> Never = { code in
            if leaving.withLock({ l in defer { l = true }; return l }) { while true { pause() } }
            service.finishRefreshes()
            exit(code)
        }
        // Logins, logouts and refreshes by other agents on the same store reach this one within 250 ms.
        // The first look is due 250 ms after start, so the timer (and the Dispatch thread it starts,
        // a tenth of a cold start) waits until then: a process answering one request never makes it.
        let stdio = StdioTransport(deferred: .init(after: 0.25) { service.watchStore(every: 0.25) })
        let output = OutputSink(transport: stdio, onClosed: { leave(0) })
        let connection = RPCConnection(registry: registry, output: output, logger: logger, options: options,
                                       session: AuthHost(subscriptions: subscriptions), onExit: { code in leave(code) })
        logger.debug("serving \(config.providers.count) providers from \(configFile)")
        // A person who typed `auth-agent` at a terminal is told what they started, and where the commands are.
        if isatty(0) == 1 {
            Logger.stderrSink("auth-agent: serving JSON-RPC 2.0 on stdin/stdout, one message per line, for a program that runs it "
                + "(an editor, a script, the clients). For the commands people type: auth-agent --help. Ctrl-D ends it.")
        }
        StdioServer.run(connection, over: stdio, maxLineBytes: arguments.maxMessageBytes)
    }

    /// The protocol over `service`: the registry and the engine's options. Each connection is
    /// made with an `AuthHost` of its own as its session.
    static func methods(_ service: AuthService) -> (MethodRegistry, RPCConnection.Options) {
        var registry = MethodRegistry()
        AuthMethods.register(into: &registry, service: service)
        var options = RPCConnection.Options()
        options.serverVersion = Arguments.version
        options.capabilities = AuthMethods.capabilities
        return (registry, options)
    }

    /// The configured session store, shared by the long-lived agent and the one-shot subcommands,
    /// and which kind is in effect (`auto` says why it fell back to files); exits 2 when it cannot
    /// be used, like a bad configuration.
    static func openStore(_ config: AgentConfig, logger: Logger) -> (SessionStore, StoreStatus) {
        do {
            return try StoreOpening.open(config.store, providers: config.providers, environment: ProcessEnvironment.current(),
                                         lockTimeout: config.lockTimeoutSeconds, warn: { logger.warn($0) })
        } catch {
            Logger.stderrSink("auth-agent: cannot use the session store: \(error)")
            exit(2)
        }
    }

    /// `auth-agent dev-issuer`: prints `{"issuer": URL}` on stdout, serves until
    /// stdin closes or a signal arrives.
    static func runDevIssuer(_ arguments: Arguments, logger: Logger) -> Never {
        let issuer = DevIssuer()
        do {
            _ = try issuer.start(port: arguments.port)
        } catch {
            Logger.stderrSink("auth-agent: dev-issuer cannot listen on 127.0.0.1:\(arguments.port): \(error)")
            exit(1)
        }
        print(JSONSerializer.string(["issuer": .string(issuer.baseURL)]))
        fflush(nil)  // stdout is a pipe, so fully buffered: the host waits for this line
        // What it serves, named where the person who started it looks.
        Logger.stderrSink("auth-agent dev-issuer: \(issuer.baseURL) (users alice/wonderland, bob/builder) serves \(issuer.baseURL)/api/me (a protected API), "
            + "\(issuer.learnableResource) (an API the agent learns from its 401) and \(issuer.baseURL)/git/demo.git (a git repository: clone and push "
            + "with 'auth-agent git-credential' as git's helper)")
        signal(SIGTERM) { _ in exit(0) }
        signal(SIGINT) { _ in exit(0) }
        while let _ = readLine() {}
        issuer.stop()
        exit(0)
    }
}
