#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import JSON

/// The host's end of a connection, one line per message: a socket's descriptor or an
/// in-process agent's `MemoryHost`. Sends may come from another thread than reads (a
/// `$/cancelRequest` on Ctrl-C while the reader waits for the answer).
public protocol ClientChannel: Sendable {
    /// Writes one line (its newline included); false once the agent's end is gone.
    func send(_ line: [UInt8]) -> Bool
    /// The next line, without its newline.
    func nextLine(timeout: Double) -> ClientRead
}

public enum ClientRead: Sendable {
    case line([UInt8])
    case timedOut
    case closed
}

/// Calls to an agent, in order, from one thread: the request out, then every line in until
/// its answer — notifications seen on the way, the agent's own requests (`loginFields`)
/// answered by the caller or refused with `-32601`, never dropped.
public final class RPCClient {
    public let channel: any ClientChannel
    private var nextID: Int64 = 1

    public init(channel: any ClientChannel) { self.channel = channel }

    public enum Failure: Error, Sendable {
        /// The agent answered with this error.
        case error(RPCError)
        case timedOut, closed, notJSON
    }

    /// A typed call (see `RPCMethod`); a result the host cannot read is `.error`.
    public func call<M: RPCMethod>(_ method: M.Type, _ params: M.Params, timeout: Double, sent: (JSONValue) -> Void = { _ in },
                                   notification: (JSONValue) -> Void = { _ in },
                                   answer: (JSONValue) -> JSONValue? = { _ in nil }) throws(Failure) -> M.Result {
        let result = try call(M.name, M.encode(params), timeout: timeout, sent: sent, notification: notification, answer: answer)
        do { return try M.decode(result: result) } catch { throw .error(error) }
    }

    /// A call by name, for what the engine itself answers (`ping`, `initialize`).
    /// - Parameter sent: told the request's id once it is written (what a `$/cancelRequest` names).
    public func call(_ method: String, _ params: JSONObject, timeout: Double, sent: (JSONValue) -> Void = { _ in },
                     notification: (JSONValue) -> Void = { _ in }, answer: (JSONValue) -> JSONValue? = { _ in nil }) throws(Failure) -> JSONValue {
        let id = JSONValue.int(nextID)
        nextID += 1
        let request = JSONSerializer.bytes(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": .object(params)]) + [0x0A]
        guard channel.send(request) else { throw .closed }
        sent(id)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(max(0, timeout) * 1e9)
        while true {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { throw .timedOut }
            let message: JSONValue
            switch channel.nextLine(timeout: Double(deadline - now) / 1e9) {
            case .timedOut: throw .timedOut
            case .closed: throw .closed
            case .line(let line):
                guard let parsed = try? JSONParser.parse(line) else { throw .notJSON }
                message = parsed
            }
            if message["id"] == id, message["method"] == nil {
                if let result = message["result"] { return result }
                throw .error(Self.error(message["error"]))
            }
            guard let asked = message["method"] else { continue }  // an answer to nothing of ours
            guard let requestId = message["id"] else { notification(message); continue }
            var reply: JSONObject = ["jsonrpc": "2.0", "id": requestId]
            if let result = answer(message) { reply["result"] = result } else {
                reply["error"] = RPCError.methodNotFound(asked.stringValue ?? "").json
            }
            guard channel.send(JSONSerializer.bytes(.object(reply)) + [0x0A]) else { throw .closed }
        }
    }

    /// Asks the agent to stop the request `id` (JSON-RPC's `$/cancelRequest`); any thread.
    public static func cancel(_ id: JSONValue, on channel: any ClientChannel) {
        _ = channel.send(JSONSerializer.bytes(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": id]]) + [0x0A])
    }

    private static func error(_ value: JSONValue?) -> RPCError {
        RPCError(code: Int(value?["code"]?.intValue ?? -32603), message: value?["message"]?.stringValue ?? "the agent answered with an error",
                 data: value?["data"])
    }
}

/// A connected Unix socket as a channel: blocking reads with a timeout, a buffer of what
/// came beyond the last line.
public final class SocketChannel: ClientChannel, @unchecked Sendable {
    public let fd: Int32
    /// Read only by the one reading thread.
    private var buffer: [UInt8] = []

    public init(fd: Int32) { self.fd = fd }

    public func send(_ line: [UInt8]) -> Bool {
        var offset = 0
        while offset < line.count {
            let n = line[offset...].withUnsafeBytes { write(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }

    public func nextLine(timeout: Double) -> ClientRead {
        UnixSocket.setTimeout(fd, max(0.001, timeout))
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<nl])
                buffer.removeSubrange(...nl)
                return .line(line)
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .timedOut }
            guard n > 0 else { return .closed }
            buffer += chunk[..<n]
        }
    }

    /// What the agent sent beyond the last line read (the `connect` relay passes it on).
    public func takeBuffered() -> [UInt8] {
        defer { buffer = [] }
        return buffer
    }
}

extension MemoryHost: ClientChannel {
    public func send(_ line: [UInt8]) -> Bool { write(line) }

    public func nextLine(timeout: Double) -> ClientRead {
        switch readLineOrEnd(timeout: timeout) {
        case .some(let line?): return .line(line)
        case .some(nil): return .closed
        case nil: return .timedOut
        }
    }
}
