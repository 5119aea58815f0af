#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSONRPC
import Locking
import Logging

/// `auth-agent connect`: a host that spawns an agent on stdin/stdout (the clients, an editor)
/// reaches the session's socket agent through this relay, unchanged; where none answers it
/// is the stdio agent itself, so the same command line works with and without one.
enum Relay {
    static func run(_ arguments: Arguments, logger: Logger) -> Never {
        let environment = ProcessEnvironment.current()
        let explicit = arguments.socket?.path ?? environment["AUTH_AGENT_SOCK"].flatMap { $0.isEmpty ? nil : $0 }
        let path = explicit ?? UnixSocket.defaultPath(environment: environment)
        guard let link = AgentLink.connect(path: path, naming: path) else {
            var serving = arguments
            serving.command = .serve
            serving.socket = nil
            let (config, configFile) = Agent.loadConfig(serving, logger: logger)
            Agent.serve(serving, config: config, configFile: configFile, logger: logger)
        }
        let (socket, pending) = link.detach()
        // A relay has nothing to finish: SIGTERM and SIGINT end it at once, as they would `cat`.
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGTERM, SIGINT] { sigaddset(&signals, s) }
        pthread_sigmask(SIG_UNBLOCK, &signals, nil)
        signal(SIGPIPE, SIG_IGN)
        // The host's requests to the agent; at the host's end of input the agent sees its end too
        // (it answers what is in flight, then closes: the other direction ends).
        let forwarding = DetachedThread.start {
            copy(from: 0, to: socket)
            shutdown(socket, Int32(SHUT_WR))
        }
        guard forwarding else {
            Logger.stderrSink("auth-agent: connect: cannot start a thread")
            exit(1)
        }
        if !pending.isEmpty { _ = StandardStream.write(pending) }
        copy(from: socket, to: 1)
        exit(0)
    }

    /// Copies until end of input or an error on either side.
    private static func copy(from source: Int32, to destination: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            guard StandardStream.write(Array(buffer[..<n]), to: destination) else { return }
        }
    }
}
