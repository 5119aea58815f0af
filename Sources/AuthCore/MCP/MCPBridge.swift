#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking

/// `auth-agent mcp URL`: MCP's stdio transport on one side (a line per JSON-RPC message),
/// Streamable HTTP on the other (or the HTTP+SSE transport of 2024-11-05: MCPLegacySSE.swift),
/// every request signed by the agent's logins.
///
/// Each message from the host is POSTed on its own task, so several are in flight (as many as
/// a lane allows) and answers go out as they come; the server's messages (JSON, or SSE events) are written
/// one line each. The bridge owes every host request exactly one answer: what the server
/// sends, or an error saying why it cannot (`pending` is the ledger).
public final class MCPBridge: @unchecked Sendable {
    public struct Options: Sendable {
        /// Seconds for one POST exchange, SSE answer included (and the wait for its place in a lane).
        public var timeout: Double
        /// POSTs in flight at once in each lane; the others wait their turn.
        public var maxPostsInFlight: Int
        /// `--header`: sent with every request to the server, beside (never instead of) the agent's authorization.
        public var headers: [(String, String)]
        /// `--ignore-tool`: tools hidden from `tools/list` and refused at `tools/call`.
        public var ignoredTools: ToolFilter
        /// `--protocol-version`: the revision offered to the server, whatever the host speaks (nil: the host's own).
        public var protocolVersion: String?
        /// `--transport`: Streamable HTTP, the HTTP+SSE transport of 2024-11-05, or one after the other.
        public var transport: MCPTransport
        public init(timeout: Double = 300, maxPostsInFlight: Int = 64, headers: [(String, String)] = [], ignoredTools: ToolFilter = ToolFilter([]),
                    protocolVersion: String? = nil, transport: MCPTransport = .httpFirst) {
            self.timeout = timeout
            self.maxPostsInFlight = maxPostsInFlight
            self.headers = headers
            self.ignoredTools = ignoredTools
            self.protocolVersion = protocolVersion
            self.transport = transport
        }
    }

    let url: String
    let transport: any HTTPStreamingTransport
    let authorizer: any MCPAuthorizer
    let options: Options
    /// The end-of-input grace, the GET stream's pause before it is opened again and a POST's wait
    /// for a place in its lane are waited on it.
    let clock: Clock
    /// Writes one line (the message without its newline); serialized by the caller.
    let output: @Sendable ([UInt8]) -> Void
    let log: @Sendable (String) -> Void
    /// `--log-level debug`: a line per HTTP exchange (method, URL without its query, status, milliseconds).
    let debug: (@Sendable (String) -> Void)?
    /// Shows a URL elicitation the host cannot (the browser under the login's rules, the prompt on
    /// stderr); true when a browser was opened (MCPBridgeElicitation.swift).
    let openURL: @Sendable (URLElicitation) -> Bool

    /// A POST holds a transfer thread until its answer ends, so a host (or a server asking it
    /// thousands of `ping`s) could otherwise cost a thread per message. The host's requests have a
    /// lane, its answers and notifications another: a request in flight may wait for an answer
    /// the server asked the host for (an elicitation), which must never queue behind it.
    let requestLane: TransferLane
    let answerLane: TransferLane

    let lock = Lock()
    var sessionId: String?
    var protocolVersion: String?
    /// Requests of the host still owed an answer.
    var pending: Set<JSONValue> = []
    var inFlight: [Int: Task<Void, Never>] = [:]
    /// The task carrying each pending request, so a cancellation can end its exchange.
    var requestTasks: [JSONValue: Int] = [:]
    var nextTask = 0
    /// The GET stream's reader: Streamable HTTP's stream of server-initiated messages, or the HTTP+SSE transport's stream.
    var listener: Task<Void, Never>?
    /// The transport spoken: nil until the first exchange decides (`--transport http-first`, `sse-first`).
    var settled: MCPTransport.Kind?
    /// While the HTTP+SSE stream lasts, the endpoint messages are POSTed to; else why there is none (MCPLegacySSE.swift).
    var sse: Result<String, AuthError>?
    var sseOpening: Task<Opening, Never>?
    /// The `initialize` sent over the HTTP+SSE transport, sent again on a new stream (a new session at the server).
    var sseInitialize: JSONValue?
    /// `tools/list` requests whose answers lose the ignored tools (`Options.ignoredTools`).
    var listingTools: Set<JSONValue> = []
    /// The latest `initialize` exchange, which the messages after it wait for.
    var initializing: Task<Void, Never>?
    var closing = false
    /// nil while host and server speak the same revision (pass-through); else what the bridge translates.
    var translation: RevisionTranslation.Mode?
    /// Requests whose answers the bridge takes itself (`call`) instead of writing them, and those answers.
    var capturing: Set<JSONValue> = []
    var captured: [JSONValue: JSONValue] = [:]
    /// Requests the bridge sent the host in a stateless server's stead, and the host's answers to them.
    var asking: Set<JSONValue> = []
    var hostAnswers: [JSONValue: JSONValue] = [:]
    var nextAsk = 0
    /// A session server's requests held for a stateless host (their `requestState` tokens), the
    /// host's retries that answer them, and the host's id each held request is answered under now.
    var holding: Set<String> = []
    var retries: [String: JSONValue] = [:]
    var answeredAs: [JSONValue: JSONValue] = [:]
    /// Held requests the host had its answer to (`input_required`): pending only so the server's
    /// answer is captured — owed to the host's retry, if one comes, never to the request itself.
    var answeredEarly: Set<JSONValue> = []
    /// Whether the host declared URL-mode elicitation (its `initialize`, or its first `_meta`): else the bridge opens those URLs.
    var hostOpensURLs = false

    public init(url: String, transport: any HTTPStreamingTransport, authorizer: any MCPAuthorizer, options: Options = Options(),
                clock: Clock = SystemClock(), output: @escaping @Sendable ([UInt8]) -> Void, log: @escaping @Sendable (String) -> Void,
                debug: (@Sendable (String) -> Void)? = nil, openURL: @escaping @Sendable (URLElicitation) -> Bool = { _ in false }) {
        self.url = url
        self.openURL = openURL
        self.clock = clock
        self.transport = transport
        self.authorizer = authorizer
        self.options = options
        settled = options.transport.settled
        requestLane = TransferLane(limit: options.maxPostsInFlight, clock: clock)
        answerLane = TransferLane(limit: options.maxPostsInFlight, clock: clock)
        self.output = output
        self.log = log
        self.debug = debug
    }

    /// One line from the host: answered at once when it is not a message, else sent on its own task.
    public func receive(line: [UInt8]) {
        if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            write(MCPMessage.error(id: .null, code: -32700, message: "Parse error: \(error)"))
            return
        }
        guard let message = MCPMessage(value) else {
            write(MCPMessage.error(id: value["id"] ?? .null, code: -32600, message: "Invalid Request: not a JSON-RPC message"))
            return
        }
        if abandons(message) || refusesIgnoredTool(message) { return }
        let started: Bool = lock.withLock {
            guard !closing else { return false }
            for id in message.requestIds { pending.insert(id); requestTasks[id] = nextTask }
            let key = nextTask
            nextTask += 1
            // What follows `initialize` (or the first `server/discover`) waits for its answer: the session
            // id and revision go on every later request, and the revisions the bridge translates between are known.
            let isInitialize = message.method == "initialize" || (message.method == "server/discover" && initializing == nil)
            let gate = isInitialize ? nil : initializing
            let task = Task { [self] in
                await gate?.value
                await handle(message, body: line)
                lock.withLock {
                    inFlight[key] = nil
                    for id in message.requestIds where requestTasks[id] == key { requestTasks[id] = nil }
                }
            }
            inFlight[key] = task
            if isInitialize { initializing = task }
            return true
        }
        if !started { log("mcp: input after the end of the session dropped") }
    }

    /// The stateless revision has no client-to-server notifications on HTTP: a host's
    /// `notifications/cancelled` there means closing that request's stream, which is the signal the
    /// server gets. The host abandoned the request, so it gets no answer. True when handled here.
    private func abandons(_ message: MCPMessage) -> Bool {
        guard message.method == "notifications/cancelled", let target = message.value["params"]?["requestId"] else { return false }
        return lock.withLock {
            if case .sessionServer? = translation {
                // A stateless host before a session server: the server hears of it the session
                // revisions' way (the notification goes on), and the host is owed no answer.
                pending.remove(target)
                return false
            }
            guard let version = message.statedProtocolVersion ?? protocolVersion, version >= MCPMessage.statelessRevision else { return false }
            if let key = requestTasks[target], pending.remove(target) != nil { inFlight[key]?.cancel() }
            return true
        }
    }

    /// `tools/call` of an ignored tool is answered here, never sent; a `tools/list` is noted so that
    /// its answer loses the ignored tools. True when answered here.
    private func refusesIgnoredTool(_ message: MCPMessage) -> Bool {
        guard !options.ignoredTools.isEmpty, message.kind == .request, let id = message.value["id"] else { return false }
        switch message.method {
        case "tools/list":
            lock.withLock { _ = listingTools.insert(id) }
            return false
        case "tools/call":
            guard let name = message.value["params"]?["name"]?.stringValue, options.ignoredTools.ignores(name) else { return false }
            write(MCPMessage.error(id: id, code: -32602, message: "Unknown tool: \(name) (ignored by this bridge: --ignore-tool)"))
            return true
        default:
            return false
        }
    }

    /// The end of input: the last requests get `grace` seconds to be answered, then the session is
    /// ended with `DELETE` (when it had an id) — all of it within about a second, because the SDK's
    /// host sends SIGTERM 2 s after closing the bridge's stdin.
    public func finish(grace: Double = 0.5) async {
        let tasks = lock.withLock { () -> [Task<Void, Never>] in
            closing = true
            return Array(inFlight.values)
        }
        let deadline = clock.deadline(after: grace)
        for task in tasks {
            _ = try? await clock.poll(until: deadline) { isDone(task) ? () : nil }
        }
        for task in tasks { task.cancel() }
        let (listener, id) = lock.withLock { (self.listener, sessionId) }
        listener?.cancel()
        for owed in lock.withLock({ () -> [JSONValue] in defer { pending = [] }; return Array(pending.subtracting(answeredEarly)) }) {
            write(MCPMessage.error(id: owed, code: -32603, message: "The bridge is closing: its input ended before the server answered",
                                   data: ["reason": "requestFailed"]))
        }
        guard let id else { return }
        var headers = [("Mcp-Session-Id", id)] + options.headers
        if let version = lock.withLock({ protocolVersion }) { headers.append(("MCP-Protocol-Version", version)) }
        do {
            headers += (try? await authorizer.signature(for: url, method: "DELETE", at: url))?.headers ?? []
            _ = try await transport.send(HTTPRequest(method: "DELETE", url: url, headers: headers, timeout: 0.4))
        } catch {
            log("mcp: the session could not be ended (DELETE \(url)): \(Self.clause(error)); the server ends it when it expires")
        }
    }

    /// What went wrong, as a clause for a log line or a message that goes on ("…: X; trying again"):
    /// the error's sentence (never a Swift value), without its final period, a leading capital lowered.
    static func clause(_ error: Error) -> String {
        var text: String
        switch error {
        case let error as AuthError: text = error.message
        case let error as HTTPTransportError: text = error.description
        case is CancellationError: text = "it was cancelled"
        case let error as CustomStringConvertible: text = error.description
        default: text = "an unexpected error"
        }
        if text.hasSuffix(".") { text.removeLast() }
        if let first = text.first, first.isUppercase, text.dropFirst().first?.isLowercase == true || text.dropFirst().first == " " {
            text = first.lowercased() + text.dropFirst()
        }
        return text
    }

    private func isDone(_ task: Task<Void, Never>) -> Bool {
        lock.withLock { !inFlight.values.contains { $0 == task } }
    }

    /// Seconds on the bridge's clock, for the debug line's milliseconds.
    func now() -> Double { clock.now().timeIntervalSince1970 }

    // MARK: Output

    /// Writes one message as one line: as the server sent it when it is one line already.
    func write(_ value: JSONValue) { output(JSONSerializer.bytes(value)) }

    /// What the server sent — a message, or a batch of them (an array, each element its own line,
    /// so every response is matched to its request): a response goes out only to a request still
    /// owed one. Anything else is dropped with a line on stderr, never written to the host, whose
    /// stdio transport allows messages only.
    func forward(_ value: JSONValue, raw: [UInt8]?) {
        if let elements = value.arrayValue {
            if elements.isEmpty { log("mcp: the server sent an empty batch, not a JSON-RPC message; dropped") }
            for element in elements { forwardMessage(element, raw: nil, inBatch: true) }
        } else {
            forwardMessage(value, raw: raw, inBatch: false)
        }
    }

    private func forwardMessage(_ value: JSONValue, raw: [UInt8]?, inBatch: Bool) {
        guard MCPMessage.isMessage(value) else {
            let what = value.objectValue == nil ? value.kindName : "an object without \"jsonrpc\": \"2.0\" and a method or an id with a result or error"
            log("mcp: the server sent \(what)\(inBatch ? " in a batch" : ""), not a JSON-RPC message; dropped")
            return
        }
        if takesURLElicitation(value) { return }
        var (value, raw) = (value, raw)
        if value["method"] == nil, let id = value["id"] {
            if lock.withLock({ listingTools.remove(id) != nil }), let kept = options.ignoredTools.filtered(value) { (value, raw) = (kept, nil) }
            switch lock.withLock({ take(value, id: id) }) {
            case .unowed:
                log("mcp: an answer from the server to no pending request (id \(JSONSerializer.string(id))) dropped")
                return
            case .captured: return
            case .host: break
            }
        }
        if let raw, !raw.contains(0x0A), !raw.contains(0x0D) { output(raw) } else { write(value) }
    }

    enum Delivery { case host, captured, unowed }

    /// Where the answer `value` to `id` goes (under the lock): nowhere when no answer is owed, to
    /// the bridge when it asked (`call`, the first answer only), else to the host, then owed no more.
    func take(_ value: JSONValue, id: JSONValue) -> Delivery {
        guard pending.contains(id) else { return .unowed }
        // `initialize`'s answer names the revision every later request states in MCP-Protocol-Version.
        if let version = value["result"]?["protocolVersion"]?.stringValue { protocolVersion = version }
        if capturing.contains(id) {
            if captured[id] == nil { captured[id] = value }
            return .captured
        }
        pending.remove(id)
        return .host
    }

    /// Answers each of `ids` still owed an answer with the error.
    func fail(_ ids: [JSONValue], code: Int = -32603, _ message: String, data: JSONObject) {
        for id in ids {
            let error = MCPMessage.error(id: id, code: code, message: message, data: data)
            if lock.withLock({ take(error, id: id) }) == .host { write(error) }
        }
    }

    func fail(_ ids: [JSONValue], _ error: AuthError) {
        var data: JSONObject = ["reason": .string(error.code.reason)]
        if let provider = error.provider { data["provider"] = .string(provider) }
        fail(ids, code: error.code == .requestFailed ? -32603 : error.code.rawValue, error.message, data: data)
    }
}
