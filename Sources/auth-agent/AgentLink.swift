#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import Dispatch
import JSON
import JSONRPC
import Logging

/// The command line's connection to an agent — the socket agent `AUTH_AGENT_SOCK` names when
/// one answers, else the agent this process runs for itself (`LocalAgent`) — over which every
/// command is the same typed calls (`RPCMethod`) any host makes: one implementation, whichever
/// agent answers, so a rule (the DPoP refusal, `--min-valid`, one login at a time) is the core's.
final class AgentLink {
    enum Agent: Sendable {
        case socket(path: String)
        case local(LocalAgent)
    }

    let agent: Agent
    private let client: RPCClient

    private init(_ agent: Agent, channel: any ClientChannel) {
        self.agent = agent
        client = RPCClient(channel: channel)
    }

    /// The agent for `command`: the socket agent when `AUTH_AGENT_SOCK` names one that answers
    /// (its configuration and store, memory store included), else this process's own.
    static func open(configPath: String?, logLevel: Logger.Level) throws(ToolFailure) -> AgentLink {
        if let path = ProcessEnvironment.current()["AUTH_AGENT_SOCK"], !path.isEmpty, let link = connect(path: path, naming: "AUTH_AGENT_SOCK") {
            return link
        }
        let local = try LocalAgent(configPath: configPath, logLevel: logLevel)
        return AgentLink(.local(local), channel: local.connect())
    }

    /// How long the agent has to answer a first `ping` before the command uses the store instead.
    static let answerTimeout = 1.0

    /// The agent at `path`, if it answers within a second and is this user's; otherwise nil,
    /// after a one-line warning naming the socket as `naming`.
    static func connect(path: String, naming: String) -> AgentLink? {
        do throws(ToolFailure) {
            let fd: Int32
            do { fd = try UnixSocket.connect(to: path, timeout: answerTimeout) } catch { throw ToolFailure(.unavailable, "\(error)") }
            let link = AgentLink(.socket(path: path), channel: SocketChannel(fd: fd))
            // A login types passwords into it: a socket another user serves (a planted one) is not the agent.
            // Root may serve it (it could read this user's files anyway), as may sshd's session (this user).
            if let uid = UnixSocket.peer(of: fd)?.uid, uid != geteuid(), uid != 0 {
                close(fd)
                throw ToolFailure(.failed, "it is served by uid \(uid), not by this user")
            }
            _ = try link.call(named: "ping", [:], timeout: answerTimeout)
            return link
        } catch {
            Logger.stderrSink("auth-agent: warn: not using the agent at \(naming) (\(TerminalText.escaped(error.message))); using the store")
            return nil
        }
    }

    /// Another connection to the same agent: a pasted redirect goes there while this one waits for its login.
    static func another(_ agent: Agent) -> AgentLink? {
        switch agent {
        case .socket(let path): return Self.connect(path: path, naming: "AUTH_AGENT_SOCK")
        case .local(let local): return AgentLink(agent, channel: local.connect())
        }
    }

    /// Hands a socket connection over (to the `connect` relay): its descriptor, blocking with no
    /// timeout, and whatever the agent sent beyond the last answer.
    func detach() -> (fd: Int32, pending: [UInt8]) {
        let socket = client.channel as! SocketChannel
        UnixSocket.setTimeout(socket.fd, 0)
        return (socket.fd, socket.takeBuffered())
    }

    /// This process's agent, when it runs one (the command line's hints about its configuration file).
    var local: LocalAgent? {
        if case .local(let local) = agent { return local }
        return nil
    }

    /// Seconds a request other than a login may take: the store lock and an HTTP call.
    var requestTimeout: Double { local?.requestTimeout ?? 60 }

    /// Before the process ends: a stale token answered at once has its refresh running on; let it
    /// reach the store (a socket agent's own process sees to its refreshes).
    func finish() { _ = local?.service.finishRefreshes() }

    /// Says what the host can do (`initialize`'s capabilities): `loginFields` for a terminal that can ask them.
    func initialize(capabilities: JSONObject) throws(ToolFailure) {
        _ = try call(named: "initialize", ["protocolVersion": "1", "capabilities": .object(capabilities)], timeout: requestTimeout)
    }

    /// A typed call; `notification` sees what comes before its answer, `answer` answers the
    /// agent's own requests meanwhile (`loginFields`: a result, or nil to refuse). Ctrl-C cancels
    /// it (`$/cancelRequest`) and waits, briefly, for the agent to unwind it. The agent's error
    /// becomes the failure the same error is everywhere (`ToolFailure(AuthError)`).
    func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params, timeout: Double? = nil, notification: (JSONValue) -> Void = { _ in },
                            answer: (JSONValue) -> JSONValue? = { _ in nil }) throws(ToolFailure) -> M.Result {
        try failing(timeout ?? requestTimeout) { (client, timeout, sent) throws(RPCClient.Failure) in
            try client.call(method, params, timeout: timeout, sent: sent, notification: notification, answer: answer)
        }
    }

    private func call(named method: String, _ params: JSONObject, timeout: Double) throws(ToolFailure) -> JSONValue {
        try failing(timeout) { (client, timeout, sent) throws(RPCClient.Failure) in try client.call(method, params, timeout: timeout, sent: sent) }
    }

    private func failing<T>(_ timeout: Double, _ body: (RPCClient, Double, (JSONValue) -> Void) throws(RPCClient.Failure) -> T) throws(ToolFailure) -> T {
        let (client, channel) = (self.client, self.client.channel)
        let ended = DispatchSemaphore(value: 0)
        let outcome: Result<T, RPCClient.Failure>
        do {
            outcome = .success(try body(client, timeout) { id in
                Interrupt.onInterrupt {
                    RPCClient.cancel(id, on: channel)
                    _ = ended.wait(timeout: .now() + 2)
                }
            })
        } catch {
            outcome = .failure(error)
        }
        Interrupt.onInterrupt(nil)
        ended.signal()
        // Ctrl-C ended the call: the handler exits (130) now that the agent has unwound it.
        Interrupt.yieldIfInterrupted()
        switch outcome {
        case .success(let value): return value
        case .failure(let error): throw failure(error, timeout: timeout)
        }
    }

    private func failure(_ failure: RPCClient.Failure, timeout: Double) -> ToolFailure {
        let agent: String
        switch self.agent {
        case .socket(let path): agent = "the agent at \(path)"
        case .local: agent = "the agent"
        }
        switch failure {
        case .timedOut: return ToolFailure(.unavailable, "authServerUnavailable: no answer within \(Int(timeout)) s")
        case .closed: return ToolFailure(.unavailable, "authServerUnavailable: \(agent) closed the connection")
        case .notJSON: return ToolFailure(.failed, "\(agent) sent something that is not JSON")
        case .error(let error):
            if let code = AuthErrorCode(rawValue: error.code) {
                return ToolFailure(AuthError.relayed(code, error.message, provider: error.data?["provider"]?.stringValue,
                                                     configKey: error.data?["configKey"]?.stringValue))
            }
            if error == .requestCancelled { return ToolFailure(.interrupted, "interrupted") }
            // What the command line sent was refused as it stands: the command's words are wrong, as for a usage mistake.
            if error.code == RPCError.invalidParams("").code { return ToolFailure(.usage, error.message) }
            return ToolFailure(.failed, error.message)
        }
    }
}
