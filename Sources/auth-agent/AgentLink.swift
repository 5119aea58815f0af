#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import JSON
import JSONRPC
import Logging

/// A one-shot command's connection to the socket agent `AUTH_AGENT_SOCK` names: requests out,
/// answers in, the agent's errors as the command's failures. With it the command needs no
/// configuration or store of its own — the agent's are used, memory store included.
final class AgentLink {
    let path: String
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID: Int64 = 1

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    private var detached = false

    deinit { if !detached { close(fd) } }

    /// Hands the connection over (to the `connect` relay): its descriptor, blocking with no
    /// timeout, and whatever the agent sent beyond the last answer.
    func detach() -> (fd: Int32, pending: [UInt8]) {
        detached = true
        UnixSocket.setTimeout(fd, 0)
        return (fd, buffer)
    }

    /// How long the agent has to answer a first `ping` before the command uses the store instead.
    static let answerTimeout = 1.0

    /// The agent at `AUTH_AGENT_SOCK`, if it is set and answers within a second; otherwise nil,
    /// after a one-line warning when it was set (the command falls back to the store).
    static func connect(environment: [String: String]) -> AgentLink? {
        guard let path = environment["AUTH_AGENT_SOCK"], !path.isEmpty else { return nil }
        return connect(path: path, naming: "AUTH_AGENT_SOCK")
    }

    /// The agent at `path`, if it answers within a second and is this user's; otherwise nil,
    /// after a one-line warning naming the socket as `naming`.
    static func connect(path: String, naming: String) -> AgentLink? {
        do throws(ToolFailure) {
            let fd: Int32
            do { fd = try UnixSocket.connect(to: path, timeout: answerTimeout) } catch { throw ToolFailure(.unavailable, "\(error)") }
            let link = AgentLink(path: path, fd: fd)
            // A login types passwords into it: a socket another user serves (a planted one) is not the agent.
            // Root may serve it (it could read this user's files anyway), as may sshd's session (this user).
            if let uid = UnixSocket.peer(of: fd)?.uid, uid != geteuid(), uid != 0 {
                throw ToolFailure(.failed, "it is served by uid \(uid), not by this user")
            }
            _ = try link.call("ping", [:], timeout: answerTimeout)
            return link
        } catch {
            Logger.stderrSink("auth-agent: warn: not using the agent at \(naming) (\(TerminalText.escaped(error.message))); using the store")
            return nil
        }
    }

    /// Sends a request and waits for its answer (`notification` sees what comes before it; the
    /// agent's own requests meanwhile — `loginFields` — are answered by `answer`: a result, or nil
    /// to refuse). The agent's error becomes the failure the same error would be in-process.
    func call(_ method: String, _ params: JSONObject, timeout: Double, notification: (JSONValue) -> Void = { _ in },
              answer: (JSONValue) -> JSONValue? = { _ in nil }) throws(ToolFailure) -> JSONValue {
        let id = nextID
        nextID += 1
        var line = JSONSerializer.bytes(["jsonrpc": "2.0", "id": .int(id), "method": .string(method), "params": .object(params)])
        line.append(0x0A)
        UnixSocket.setTimeout(fd, timeout)
        guard StandardStream.write(line, to: fd) else { throw lost() }
        // Ctrl-C during a login: the agent abandons it now rather than when the closed connection's grace ends.
        let (socket, cancel) = (fd, JSONSerializer.bytes(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": .int(id)]]) + [0x0A])
        Interrupt.onInterrupt { StandardStream.write(cancel, to: socket) }
        defer { Interrupt.onInterrupt(nil) }
        while true {
            let message = try next()
            guard message["id"] == .int(id) else {
                if let method = message["method"] {
                    guard let asked = message["id"] else { notification(message); continue }
                    var reply: JSONObject = ["jsonrpc": "2.0", "id": asked]
                    if let result = answer(message) { reply["result"] = result } else {
                        reply["error"] = ["code": -32601, "message": .string("this host does not answer \(method.stringValue ?? "that")")]
                    }
                    guard StandardStream.write(JSONSerializer.bytes(.object(reply)) + [0x0A], to: fd) else { throw lost() }
                }
                continue
            }
            if let result = message["result"] { return result }
            throw Self.failure(message["error"])
        }
    }

    /// The next message from the agent.
    private func next() throws(ToolFailure) -> JSONValue {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                guard let message = try? JSONParser.parse(line) else { throw ToolFailure(.failed, "the agent at \(path) sent something that is not JSON") }
                return message
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                throw ToolFailure(.unavailable, "authServerUnavailable: the agent at \(path) did not answer in time")
            }
            guard n > 0 else { throw lost() }
            buffer += chunk[..<n]
        }
    }

    private func lost() -> ToolFailure {
        ToolFailure(.unavailable, "authServerUnavailable: the agent at \(path) closed the connection")
    }

    /// A protocol error as `ToolFailure(AuthError)` makes it (auth errors), else a plain failure.
    static func failure(_ error: JSONValue?) -> ToolFailure {
        let message = error?["message"]?.stringValue ?? "the agent answered with an error"
        if let number = error?["code"]?.intValue, let code = AuthErrorCode(rawValue: Int(number)) {
            return ToolFailure(AuthError.relayed(code, message, provider: error?["data"]?["provider"]?.stringValue))
        }
        return ToolFailure(.failed, message)
    }
}
