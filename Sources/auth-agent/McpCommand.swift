#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import Dispatch
import JSONRPC
import Locking
import Logging
import Wire

/// `auth-agent mcp URL`: an MCP host's stdio server that is the remote MCP server at URL (Streamable
/// HTTP, or the HTTP+SSE transport of 2024-11-05), reached with the agent's logins (`MCPBridge` does the transport).
enum McpCommand {
    struct Options: Equatable {
        var url = ""
        var account: String?
        var scopes: [String] = []
        var audience: String?
        var resource: String?
        var device = false
        /// `--header 'Name: value'`, checked: sent with every request, beside the agent's authorization.
        var headers: [Header] = []
        /// `--ignore-tool PATTERN`.
        var ignoredTools: [String] = []
        /// `--protocol-version REVISION`: what the bridge offers the server (nil: what the host speaks).
        var protocolVersion: String?
        /// `--allow-http`: plain http to a host other than loopback (a trusted private network); no token goes there.
        var allowHTTP = false
        /// `--callback-port N`: a learned API's browser login listens on N (`learn.redirectPort` for this bridge).
        var callbackPort: Int?
        /// `--transport STRATEGY`: mcp-remote's strategies, http-first (its default) unless given.
        var transport = MCPTransport.httpFirst
        var timeout = 300.0
        var configPath: String?
        var logLevel: Logger.Level = .warn
        var help = false
    }

    struct Header: Equatable {
        let name: String
        let value: String
    }

    /// The headers the bridge sets itself (or the agent signs with), which `--header` may not replace.
    static let bridgeHeaders = ["authorization", "dpop", "content-type", "accept", "mcp-session-id", "mcp-protocol-version", "mcp-method",
                                "mcp-name", "last-event-id"]

    /// `--header 'Name: value'` as mcp-remote takes it (`Name:value` too), checked as `fetch -H` is.
    static func header(_ line: String) throws(Arguments.UsageError) -> Header {
        guard let colon = line.firstIndex(of: ":") else { throw Arguments.UsageError(description: "--header wants 'Name: value', got '\(line)'") }
        let (name, value) = (HTTPText.trimmingWhitespace(line[..<colon]), HTTPText.trimmingWhitespace(line[line.index(after: colon)...]))
        if bridgeHeaders.contains(name.lowercased()) {
            throw Arguments.UsageError(description: "--header: \(name) is set by the bridge"
                + (["authorization", "dpop"].contains(name.lowercased())
                    ? "; the agent signs every request with the login that covers the URL (a pasted token: a provider with flow \"token\", auth-agent login ID --token-stdin)"
                    : ""))
        }
        switch FetchRequest.refusal(name: name, value: value) {
        case .notAToken?: throw Arguments.UsageError(description: "--header: a header name must be an HTTP token (no spaces, CR, LF or separators)")
        case .unsafeValue?: throw Arguments.UsageError(description: "--header: the value of \(name) contains CR, LF or NUL")
        case .reserved?: throw Arguments.UsageError(description: "--header: \(name) is set by the HTTP layer")
        case nil: return Header(name: name, value: value)
        }
    }

    static func parse(_ argv: [String]) throws(Arguments.UsageError) -> Options {
        var options = Options()
        var positional: [String] = []
        var i = 0
        func value(_ flag: String, _ inline: String?) throws(Arguments.UsageError) -> String {
            if let inline { return inline }
            i += 1
            guard i < argv.count else { throw Arguments.UsageError(description: "\(flag) needs a value") }
            return argv[i]
        }
        while i < argv.count {
            let arg = argv[i]
            var (flag, inline) = (arg, String?.none)
            if arg.hasPrefix("--"), let eq = arg.firstIndex(of: "=") {
                (flag, inline) = (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
            }
            switch flag {
            case "-h", "--help": options.help = true
            case "--config": options.configPath = try value(flag, inline)
            case "--log-level":
                let v = try value(flag, inline)
                guard let level = Logger.Level(name: v) else { throw Arguments.UsageError(description: "--log-level must be one of error, warn, info, debug, got '\(v)'") }
                options.logLevel = level
            case "--account": options.account = try value(flag, inline)
            case "--scope": options.scopes.append(try value(flag, inline))
            case "--audience": options.audience = try value(flag, inline)
            case "--resource": options.resource = try value(flag, inline)
            case "--device": options.device = true
            case "--header": options.headers.append(try header(try value(flag, inline)))
            case "--ignore-tool": options.ignoredTools.append(try value(flag, inline))
            case "--allow-http": options.allowHTTP = true
            case "--callback-port":
                let v = try value(flag, inline)
                guard let port = Int(v), (1...65535).contains(port) else { throw Arguments.UsageError(description: "--callback-port wants a port from 1 to 65535, got '\(v)'") }
                options.callbackPort = port
            case "--transport":
                let v = try value(flag, inline)
                guard let transport = MCPTransport(rawValue: v) else {
                    throw Arguments.UsageError(description: "--transport must be one of \(MCPTransport.allCases.map(\.rawValue).joined(separator: ", ")), got '\(v)'")
                }
                options.transport = transport
            case "--protocol-version":
                let v = try value(flag, inline)
                guard RevisionTranslation.knownRevisions.contains(v) else {
                    throw Arguments.UsageError(description: "--protocol-version must be one of \(RevisionTranslation.knownRevisions.joined(separator: ", ")), got '\(v)'")
                }
                options.protocolVersion = v
            case "--timeout":
                let v = try value(flag, inline)
                guard let seconds = Double(v), seconds > 0, seconds <= 86_400 else { throw Arguments.UsageError(description: "--timeout wants seconds from 0 to 86400, got '\(v)'") }
                options.timeout = seconds
            case _ where flag.hasPrefix("-") && flag.count > 1: throw Arguments.unknownOption(flag, of: "mcp")
            default: positional.append(arg)
            }
            i += 1
        }
        if options.help { return options }
        guard positional.count == 1 else { throw Arguments.UsageError(description: "'mcp' needs exactly one URL (the MCP server's endpoint)") }
        options.url = positional[0]
        guard let origin = Origin(url: options.url), origin.scheme == "https" || origin.isLoopback || options.allowHTTP else {
            throw Arguments.UsageError(description: "'mcp' needs an https URL (or http to loopback; --allow-http for a trusted private network), got '\(options.url)'")
        }
        return options
    }

    /// Serves until the host closes stdin or sends SIGTERM/SIGINT, then ends the session and exits 0.
    static func run(_ options: Options) -> Never {
        StdioServer.holdTerminationSignals()
        signal(SIGPIPE, SIG_IGN)
        var command = ToolCommand(action: .header(url: options.url))
        (command.scopes, command.audience, command.resource) = (options.scopes, options.audience, options.resource)
        let session: LocalAgent
        let shape: TokenShape?
        do {
            shape = try Tool.shape(of: command)
            session = try LocalAgent(configPath: options.configPath, logLevel: options.logLevel) { config in
                if let port = options.callbackPort { config.learnRedirectPort = port }
            }
        } catch {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message))")
            exit(error.code.rawValue)
        }
        // Logins and refreshes by other bridges and agents on the store are seen within the usual 250 ms.
        session.service.watchStore(every: 0.25)
        let logger = session.logger
        let warn: @Sendable (String) -> Void = { logger.warn(TerminalText.escaped($0)) }
        let everyExchange: @Sendable (String) -> Void = { logger.debug(TerminalText.escaped($0)) }
        let debug = logger.level >= .debug ? everyExchange : nil
        let bridge = MCPBridge(url: options.url, transport: SystemHTTPTransport(), authorizer: McpLogins(session: session, account: AccountChoice(account: options.account), shape: shape, device: options.device),
                               options: MCPBridge.Options(timeout: options.timeout, headers: options.headers.map { ($0.name, $0.value) },
                                                            ignoredTools: ToolFilter(options.ignoredTools), protocolVersion: options.protocolVersion,
                                                            transport: options.transport), output: LineWriter.standardOutput.write, log: warn, debug: debug,
                               openURL: { McpLogins.show($0, server: options.url) })
        let ending = Ending()
        let done = DispatchSemaphore(value: 0)
        let end: @Sendable () -> Void = {
            guard ending.begin() else { return }
            Task {
                await bridge.finish()
                done.signal()
            }
        }
        _ = DetachedThread.start { readLines(into: bridge); end() }
        _ = DetachedThread.start {
            var signals = sigset_t()
            sigemptyset(&signals)
            for terminating in [SIGTERM, SIGINT, SIGHUP] { sigaddset(&signals, terminating) }
            var received: Int32 = 0
            while sigwait(&signals, &received) != 0 {}
            end()
        }
        done.wait()
        session.service.finishRefreshes()
        exit(0)
    }

    /// stdin, a line per message; a line longer than the cap is answered as a parse error and skipped.
    static func readLines(into bridge: MCPBridge, maxLine: Int = 64 << 20) {
        var line: [UInt8] = []
        var skipping = false
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            for byte in buffer[0..<n] {
                if byte == 0x0A {
                    if !skipping { bridge.receive(line: line) }
                    line.removeAll(keepingCapacity: true)
                    skipping = false
                } else if !skipping {
                    line.append(byte)
                    if line.count > maxLine {
                        bridge.receive(line: Array("{\"line too long\"".utf8))  // answered as the parse error it is
                        line = []
                        skipping = true
                    }
                }
            }
        }
        if !line.isEmpty, !skipping { bridge.receive(line: line) }
    }

    /// The first of EOF and a signal ends the bridge; the other finds it ending.
    final class Ending: Sendable {
        private let started = Locked(false)
        func begin() -> Bool { started.withLock { was in defer { was = true }; return !was } }
    }
}

/// stdout, one message a line, whole lines only: answers come from several tasks at once.
final class LineWriter: Sendable {
    static let standardOutput = LineWriter(fd: 1)
    private let fd: Int32
    private let lock = Lock()

    init(fd: Int32) { self.fd = fd }

    @Sendable func write(_ message: [UInt8]) {
        let line = message + [0x0A]
        lock.withLock {
            var offset = 0
            while offset < line.count {
                let n = line[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                offset += n
            }
        }
    }
}
