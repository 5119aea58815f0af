import AuthCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSONRPC
import Locking
import Logging

/// `auth-agent serve --socket`: one agent for every tool of a session, as ssh-agent is for
/// keys. Each connection is a host session of its own over the same service (one memory, one
/// refresh per expiry); a second, forwarded socket may serve a subset of the providers.
enum SocketAgent {
    static func serve(_ options: SocketOptions, _ arguments: Arguments, config: AgentConfig, configFile: String, logger: Logger) -> Never {
        let limit = DescriptorBudget.raiseLimit()
        let environment = ProcessEnvironment.current()
        let path = options.path ?? UnixSocket.defaultPath(environment: environment)
        let locks = [claim(path)] + (options.forwardPath.map { [claim($0)] } ?? [])
        // The daemon listens itself: a client's SO_PEERCRED names the process that called listen(2).
        let ready = options.daemon ? daemonize(path: path) : nil
        let main = listen(path)
        let forward = options.forwardPath.map(listen)

        let (store, storeStatus) = Agent.openStore(config, logger: logger)
        let caps = DescriptorBudget.caps(main: options.maxConnections, forward: options.forwardPath.map { _ in options.forwardMaxConnections }, limit: limit)
        if caps.main < options.maxConnections || (options.forwardPath != nil && caps.forward < options.forwardMaxConnections) {
            logger.warn("the descriptor limit (\(limit)) leaves room for \(caps.main) connections on \(path)"
                        + (options.forwardPath.map { " and \(caps.forward) on \($0)" } ?? "") + "; raise it (ulimit -n) to serve more")
        }
        // A login started on either socket can be completed (`completeLogin`) from the main one;
        // the forward socket completes only its own (`PendingLogins`).
        let pending = PendingLogins()
        var servers = [server(path, main, caps.main, config, store, storeStatus, arguments, logger, pending, door: .host)]
        if let forward, let forwardPath = options.forwardPath {
            // A configured provider or an API learned before (`login {resource}` on the laptop).
            if let unknown = options.forwardProviders.first(where: { !servers[0].service.knows($0) }) {
                Logger.stderrSink("auth-agent: --forward-providers names \"\(unknown)\", which \(configFile) does not configure and no learned API has as its id")
                exit(2)
            }
            // Its own service over the same store, whose door decides what exists and what is
            // allowed there; sessions are the same ones.
            let door = Door.forwarded(providers: Set(options.forwardProviders))
            servers.append(server(forwardPath, forward, caps.forward, config, store, storeStatus, arguments, logger, pending, door: door))
        }
        if let ready {
            // Now the parent may print the lines and exit: the socket answers (and the
            // forwarded providers were found; a child that exits before this exits the parent).
            StandardStream.write([0x0A], to: ready)
            close(ready)
        }
        for s in servers where !s.server.start() {
            Logger.stderrSink("auth-agent: cannot start a thread to accept connections on \(s.server.path)")
            exit(1)
        }
        for s in servers { s.service.watchStore(every: 0.25) }
        logger.info("serving \(config.providers.count) providers from \(configFile) on \(path)")

        // SIGTERM and SIGINT (blocked since `main`) stop both sockets; in-flight requests are
        // answered and refreshes reach the store before the process ends.
        var signals = sigset_t()
        sigemptyset(&signals)
        for s in [SIGTERM, SIGINT] { sigaddset(&signals, s) }
        var received: Int32 = 0
        while sigwait(&signals, &received) != 0 {}
        logger.info("stopping the agent on \(path)")
        let grace = RPCConnection.Options().shutdownGrace + RPCConnection.Options().finalFlushTimeout
        for s in servers { s.server.stop(timeout: grace) }
        for s in servers { _ = s.service.finishRefreshes() }
        withExtendedLifetime(locks) { exit(0) }
    }

    /// One server per path: the lock beside the socket says whether one is alive (a socket
    /// file alone cannot: a killed agent leaves it behind), and is held for the life of the
    /// process. Exits 2 when another agent holds it; removes a dead one's socket file.
    static func claim(_ path: String) -> Int32 {
        do throws(UnixSocket.Failure) {
            try UnixSocket.prepareDirectory(of: path)
        } catch {
            Logger.stderrSink("auth-agent: \(error)")
            exit(2)
        }
        let lock = open(path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            Logger.stderrSink("auth-agent: cannot open \(path).lock: \(String(cString: strerror(errno)))")
            exit(2)
        }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? UnixSocket.connect(to: path, timeout: 1)).flatMap { fd in
                defer { close(fd) }
                return UnixSocket.peer(of: fd)?.pid
            }
            Logger.stderrSink("auth-agent: another agent\(holder.map { " (pid \($0))" } ?? "") already serves \(path)")
            exit(2)
        }
        // Nobody holds the lock: a socket file there was left by an agent that died. Anything
        // else at the path is not ours to remove.
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFSOCK else {
                Logger.stderrSink("auth-agent: \(path) exists and is not a socket; not replacing it")
                exit(2)
            }
            unlink(path)
        }
        return lock
    }

    /// The listening socket at a claimed path; exits 2 when it cannot be made.
    static func listen(_ path: String) -> Int32 {
        do throws(UnixSocket.Failure) {
            return try UnixSocket.listen(at: path)
        } catch {
            Logger.stderrSink("auth-agent: \(error)")
            exit(2)
        }
    }

    private static func server(_ path: String, _ listener: Int32, _ maxConnections: Int, _ config: AgentConfig, _ store: SessionStore,
                               _ storeStatus: StoreStatus?, _ arguments: Arguments, _ logger: Logger, _ pending: PendingLogins, door: Door)
        -> (server: SocketServer, service: AuthService)
    {
        let subscriptions = Subscriptions()
        let service = AuthService(config: config, store: store, storeStatus: storeStatus, transport: SystemHTTPTransport(),
                                  logger: logger, lockTimeout: config.lockTimeoutSeconds, pendingLogins: pending, door: door,
                                  events: { subscriptions.deliver($0) })
        let (registry, options) = Agent.methods(service)
        let server = SocketServer(path: path, listener: listener, maxLineBytes: arguments.maxMessageBytes, maxConnections: maxConnections,
                                  logger: logger) { output, onExit in
            RPCConnection(registry: registry, output: output, logger: logger, options: options,
                          session: AuthHost(subscriptions: subscriptions), onExit: onExit)
        }
        return (server, service)
    }

    /// `--daemon`, as ssh-agent does it: the parent waits until the child's socket answers
    /// (or the child fails, having said why on the shared stderr: its exit code is the
    /// parent's), prints the shell lines and exits; the child leaves the terminal's session
    /// with stdin and stdout on /dev/null — so `eval "$(…)"` returns at once. Stderr stays:
    /// warnings (a refused peer) still reach whoever started it. Runs before any thread is
    /// started (the store is not open yet), as `fork` requires. Returns, in the child, where
    /// to say it is ready.
    private static func daemonize(path: String) -> Int32 {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            Logger.stderrSink("auth-agent: cannot go to the background: \(String(cString: strerror(errno)))")
            exit(1)
        }
        let pid = forkProcess()
        if pid < 0 {
            Logger.stderrSink("auth-agent: cannot go to the background: \(String(cString: strerror(errno)))")
            exit(1)
        }
        if pid > 0 {
            close(pipeEnds[1])
            var byte: UInt8 = 0
            var n = 0
            repeat { n = read(pipeEnds[0], &byte, 1) } while n < 0 && errno == EINTR
            guard n == 1 else {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                _exit((status >> 8) & 0xFF == 0 ? 1 : (status >> 8) & 0xFF)
            }
            let lines = "AUTH_AGENT_SOCK=\(shellQuoted(path)); export AUTH_AGENT_SOCK;\nAUTH_AGENT_PID=\(pid); export AUTH_AGENT_PID;\n"
            StandardStream.write(Array(lines.utf8))
            _exit(0)
        }
        close(pipeEnds[0])
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        setsid()
        let null = open("/dev/null", O_RDWR)
        if null >= 0 {
            dup2(null, 0)
            dup2(null, 1)
            if null > 2 { close(null) }
        }
        return pipeEnds[1]
    }

    /// `serve --stop`: SIGTERM to the process serving `AUTH_AGENT_SOCK` (found from the socket
    /// itself, so a stale `AUTH_AGENT_PID` can never name a stranger), waiting until it is gone;
    /// prints the shell lines that unset the variables.
    static func stop(logger: Logger) -> Never {
        let environment = ProcessEnvironment.current()
        guard let path = environment["AUTH_AGENT_SOCK"], !path.isEmpty else {
            Logger.stderrSink("auth-agent: --stop: AUTH_AGENT_SOCK is not set")
            exit(2)
        }
        let peer: UnixSocket.Peer?
        do throws(UnixSocket.Failure) {
            let fd = try UnixSocket.connect(to: path, timeout: 1)
            peer = UnixSocket.peer(of: fd)
            close(fd)
        } catch {
            Logger.stderrSink("auth-agent: --stop: no agent answers at \(path): \(error)")
            exit(1)
        }
        guard let peer, let pid = peer.pid, peer.uid == geteuid() else {
            Logger.stderrSink("auth-agent: --stop: \(path) is not served by a process of this user")
            exit(1)
        }
        if let named = environment["AUTH_AGENT_PID"].flatMap({ pid_t($0) }), named != pid {
            // A forwarded socket is served by ssh (or socat), not by the agent.
            Logger.stderrSink("auth-agent: --stop: \(path) is served by pid \(pid), not AUTH_AGENT_PID \(named); stop the agent where it runs")
            exit(1)
        }
        guard kill(pid, SIGTERM) == 0 else {
            Logger.stderrSink("auth-agent: --stop: cannot signal pid \(pid): \(String(cString: strerror(errno)))")
            exit(1)
        }
        // Gone once its socket file is: it removes it after the last answers.
        var waited = 0
        while access(path, F_OK) == 0 && kill(pid, 0) == 0 && waited < 200 {
            usleep(50_000)
            waited += 1
        }
        StandardStream.write(Array("unset AUTH_AGENT_SOCK;\nunset AUTH_AGENT_PID;\necho Agent pid \(pid) stopped;\n".utf8))
        exit(0)
    }

    /// A word the shell reads back as `text`.
    static func shellQuoted(_ text: String) -> String {
        let plain = text.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || "/._-+:@%,".utf8.contains(c)
        }
        return plain && !text.isEmpty ? text : "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}

/// `fork(2)`, which Swift's Darwin overlay marks unavailable (it is safe here: no thread runs yet).
@_silgen_name("fork") private func forkProcess() -> pid_t
