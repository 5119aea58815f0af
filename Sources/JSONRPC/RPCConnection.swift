import Dispatch
import JSON
import Locking
import Logging

/// One JSON-RPC 2.0 peer: validates and dispatches incoming messages, owns the
/// lifecycle (`initialize`, `shutdown`, `exit`), cancellation and batching, and
/// writes answers to an `OutputSink`. Knows nothing of stdio or auth: bytes in
/// through `handleLine` (a `Transport`'s, framed by `serve`), messages out through
/// the sink. What the program keeps for the host beside that is its `session`.
///
/// The agent may also send the host requests of its own (`request`): their ids are
/// strings `agent-N`, and the host answers them as any JSON-RPC peer answers a request.
///
/// Threading: `handleLine` is called from one reader thread. Methods that
/// answer at once do so on that thread; the rest run as tasks, concurrently,
/// so a slow request never holds back a later one.
public final class RPCConnection: @unchecked Sendable {
    public struct Options: Sendable {
        /// The largest batch answered; larger ones get one `-32600`.
        public var maxBatch = 1000
        /// How long in-flight requests may finish after end of input or a signal.
        public var shutdownGrace = 5.0
        /// How long the last answers may take to be written once the grace is
        /// over: a host that stopped reading holds the exit no longer than this.
        public var finalFlushTimeout = 0.5
        public var serverName = "auth-agent"
        public var serverVersion = "0.0.0"
        /// Advertised in `initialize`'s result.
        public var capabilities: JSONValue = [:]
        public init() {}
    }

    /// The methods the engine itself answers, declared like any other.
    public static let lifecycleMethods: [MethodDescriptor] = [
        MethodDescriptor("initialize", summary: "Optional handshake: agree on the protocol version and learn the agent's capabilities.",
                         params: [.init("protocolVersion"), .init("clientInfo"), .init("capabilities")], result: "InitializeResult"),
        MethodDescriptor("ping", summary: "Answers {} at once; for liveness checks and latency measurement.", result: "EmptyResult"),
        MethodDescriptor("shutdown", summary: "Stop accepting requests; answer null. Send exit (or close stdin) next.", result: "NullResult"),
        MethodDescriptor("exit", kind: .notification, summary: "End the process with code 0, after in-flight requests are answered (at most 5 s).", result: nil),
        MethodDescriptor("$/cancelRequest", kind: .notification, summary: "Cancel an in-flight request; it is answered with -32800.",
                         params: [.init("id", required: true)], result: nil),
    ]

    public let output: OutputSink
    /// What the program keeps for this host (an auth agent's subscription and account
    /// selections), freed with the connection: told `closed` when it ends.
    public let session: (any HostSession)?
    private let registry: MethodRegistry
    private let options: Options
    private let logger: Logger
    private let onExit: @Sendable (Int32) -> Void
    private let inFlight = InFlightRequests()
    private let scheduler = RequestScheduler()
    private let running = DispatchGroup()
    private let lifecycle = Locked(Lifecycle())
    private let hostRequests = HostRequests()

    private struct Lifecycle {
        var initialized = false
        var shutDown = false
        var exiting = false
    }

    public init(registry: MethodRegistry, output: OutputSink, logger: Logger, options: Options = Options(),
                session: (any HostSession)? = nil, onExit: @escaping @Sendable (Int32) -> Void)
    {
        self.registry = registry
        self.output = output
        self.session = session
        self.logger = logger
        self.options = options
        self.onExit = onExit
    }

    // MARK: Input

    /// Handles one framed line (without its newline).
    public func handleLine(_ bytes: UnsafeBufferPointer<UInt8>) {
        if answeredByShortcut(bytes) { return }
        let message: JSONValue
        do {
            message = try JSONParser.parse(bytes)
        } catch {
            logger.debug("unparseable message: \(error)")
            enqueue(RPCResponse(id: .null, error: .parseError(error.message)))
            return
        }
        if case .array(let items) = message {
            handleBatch(items)
            return
        }
        switch handleMessage(message) {
        case .none: break
        case .now(let response, let then):
            enqueue(response)
            then?()
        case .later(let id, let work, let answered): spawn(id: id, work, answered: answered, deliver: sendAnswer)
        }
    }

    /// A plain request to a method with a shortcut (or a plain `ping`), answered
    /// from the line's bytes; false when the shortcut is not sure or the request
    /// is not one the general path would run at once (shutting down, its id in
    /// use) — then nothing has happened and the general path takes the line.
    private func answeredByShortcut(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let request = PlainRequest(line: line, find: { $0.is("ping") ? .ping : registry.shortcut($0).map(Shortcut.method) }),
              !lifecycle.current.shutDown, !inFlight.contains(request.id)
        else { return false }
        guard case .method(let shortcut) = request.target else {
            // `ping`, as `dispatch` answers it: no params, or none named.
            guard request.params?.isEmpty ?? true else { return false }
            enqueue(RPCResponse(id: request.id, encodedResult: Self.emptyResult))
            return true
        }
        guard let params = request.params else { return false }
        do {
            guard let text = try shortcut(params, ShortcutCall(id: request.id, connection: self, scheduler: scheduler)) else { return false }
            enqueue(RPCResponse(id: request.id, encodedResult: text))
        } catch {
            enqueue(RPCResponse(id: request.id, error: error))
        }
        return true
    }

    private static let emptyResult = JSONText([:])

    private enum Shortcut {
        case ping
        case method(RPCShortcut)
    }

    /// A line longer than the limit: answered without ever parsing it.
    public func handleOversizedLine(limit: Int) {
        enqueue(RPCResponse(id: .null, error: .invalidRequest("message longer than \(limit) bytes")))
    }

    /// Sends a notification to the host.
    public func notify(_ method: String, _ params: JSONValue) {
        output.send(["jsonrpc": "2.0", "method": .string(method), "params": params])
    }

    /// Sends the host a request and waits for its answer: the result, or the host's error
    /// thrown as an `RPCError`. Throws `HostRequestFailure.timedOut` when no answer came within
    /// `timeout` seconds, `.closed` when the host went first (end of input, `exit`), and
    /// `CancellationError` when the waiting task is cancelled; an answer after any of those is
    /// ignored. The id is the string `agent-N`: the agent's own numbering, which its prefix
    /// keeps apart from the ids of the host's requests in the host's bookkeeping and logs.
    public func request(_ method: String, _ params: JSONValue, timeout: Double) async throws -> JSONValue {
        try await hostRequests.send(timeout: timeout) { id in
            output.send(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": params])
        }
    }

    /// Ends the host's request `id` as its `$/cancelRequest` would (answered -32800, its work
    /// cancelled): for a host that declined, in its answer to a request of the agent's, the
    /// work its own request started (a login it will not present).
    public func cancel(request id: JSONValue) {
        inFlight.cancel(id)?(RPCResponse(id: id, error: .requestCancelled))
    }

    /// The host went (end of input, `exit`): fails the requests sent to it that are still
    /// unanswered, and any sent later, with `HostRequestFailure.closed`.
    func failHostRequests() { hostRequests.closeAll() }

    /// End of input, `exit` or a termination signal: let in-flight work finish within
    /// the grace period, flush, then `onExit(0)` — which ends the process for stdio's
    /// host and disconnects the transport of any other — within the grace (plus
    /// `finalFlushTimeout`) even when the host stopped reading and every
    /// writer is stuck on a full stdout.
    public func finish() {
        let first = lifecycle.withLock { l -> Bool in
            defer { l.exiting = true }
            return !l.exiting
        }
        guard first else { return }
        let deadline = DispatchTime.now() + options.shutdownGrace
        if running.wait(timeout: deadline) == .timedOut {
            logger.warn("in-flight requests did not finish within \(options.shutdownGrace) s; exiting anyway")
        }
        if !output.flush(before: max(deadline, .now() + options.finalFlushTimeout)) {
            logger.warn("the host is not reading the agent's output; exiting without writing the last answers")
        }
        onExit(0)
    }

    /// Cancels every request still in flight once `finish` has given them their grace: a
    /// socket connection that closed leaves the agent running, and a login nobody waits for
    /// any more must not hold its provider's lock (stdio's `finish` ends the process instead).
    func cancelInFlight() {
        for (id, deliver) in inFlight.cancelAll() { deliver(RPCResponse(id: id, error: .requestCancelled)) }
    }

    // MARK: Dispatch

    private enum Reply {
        case none
        /// An answer now; `then` runs once it is queued (it releases later requests).
        case now(RPCResponse, then: (@Sendable () -> Void)? = nil)
        /// Work whose answer comes later; `answered` runs once that answer is queued,
        /// whatever it is (result, error, cancellation). In a batch, which is answered
        /// whole, it runs as soon as the answer is known.
        case later(JSONValue?, Work, answered: (@Sendable () -> Void)?)
    }

    /// What finished work answers with.
    private enum Answer {
        case result(JSONValue)
        case encoded(JSONText)
    }

    private typealias Work = @Sendable () async throws -> Answer

    private func enqueue(_ response: RPCResponse) {
        output.enqueue { response.write(to: &$0) }
    }

    /// Delivers a lone request's answer from a task or a cancellation.
    private var sendAnswer: InFlightRequests.Deliver {
        { [output] response in output.send { response.write(to: &$0) } }
    }

    private func handleMessage(_ message: JSONValue) -> Reply {
        guard case .object(let o) = message else {
            return .now(RPCResponse(id: .null, error: .invalidRequest("a message must be an object, got \(message.kindName)")))
        }
        let rawID = o["id"]
        var id: JSONValue = .null
        if let rawID {
            switch rawID {
            case .string, .int, .double, .null: id = rawID
            default:
                return .now(RPCResponse(id: .null, error: .invalidRequest("'id' must be a string, a number or null, got \(rawID.kindName)")))
            }
        }
        guard case .string("2.0")? = o["jsonrpc"] else {
            return .now(RPCResponse(id: id, error: .invalidRequest("'jsonrpc' must be \"2.0\"")))
        }
        guard case .string(let method)? = o["method"] else {
            if o["result"] != nil || o["error"] != nil {
                // The host's answer to a request the agent sent (`request`).
                if !hostRequests.answer(id, result: o["result"], error: o["error"]) {
                    logger.debug("ignoring a response from the host that answers no request of the agent's")
                }
                return .none
            }
            return .now(RPCResponse(id: id, error: .invalidRequest("'method' must be a string")))
        }
        let isNotification = rawID == nil
        if !isNotification && inFlight.contains(id) {
            // Two answers with one id could not be told apart, and a cancellation would hit both.
            return .now(RPCResponse(id: id, error: .invalidRequest("id \(JSONSerializer.string(id)) is in use by a request still in flight")))
        }
        var params = JSONObject()
        switch o["params"] {
        case nil: break
        case .object(let p)?: params = p
        case .array(let items)?:
            // `[]` is how some encoders (Lua, PHP) write "no params"; anything else is positional.
            if !items.isEmpty {
                if isNotification { return .none }
                return .now(RPCResponse(id: id, error: .invalidParams("params must be passed by name, as an object")))
            }
        case let other?:
            return .now(RPCResponse(id: id, error: .invalidRequest("'params' must be an object, got \(other.kindName)")))
        }

        let reply = dispatch(method: method, id: isNotification ? nil : id, params: params)
        if isNotification {
            switch reply {
            case .later(_, let work, let answered): return .later(nil, work, answered: answered)
            case .now(_, let then): then?()  // nothing to answer, but later requests may wait for it
            case .none: break
            }
            return .none
        }
        return reply
    }

    private func dispatch(method: String, id: JSONValue?, params: JSONObject) -> Reply {
        let state = lifecycle.current
        if state.shutDown && method != "exit" {
            return .now(RPCResponse(id: id ?? .null, error: .invalidRequest("the agent is shutting down; only 'exit' is accepted")))
        }
        let p = RPCParams(params)
        do {
            switch method {
            case "initialize": return .now(RPCResponse(id: id ?? .null, result: try initialize(p)))
            case "ping":
                try p.rejectUnknown(allowed: [])
                return .now(RPCResponse(id: id ?? .null, result: [:]))
            case "shutdown":
                try p.rejectUnknown(allowed: [])
                lifecycle.withLock { $0.shutDown = true }
                return .now(RPCResponse(id: id ?? .null, result: .null))
            case "exit":
                // Like end of input: requests still in flight get their answers first (bounded);
                // the host, told to go, answers none of the agent's any more.
                failHostRequests()
                finish()
                return .none
            case "$/cancelRequest":
                guard let target = p["id"] else { throw RPCError.invalidParams("missing required field 'id'") }
                inFlight.cancel(target)?(RPCResponse(id: target, error: .requestCancelled))
                return id == nil ? .none : .now(RPCResponse(id: id!, result: .null))
            default: break
            }
            guard let entry = registry.entry(method) else {
                return .now(RPCResponse(id: id ?? .null, error: .methodNotFound(method)))
            }
            if let refusal = entry.access(p) { return .now(RPCResponse(id: id ?? .null, error: refusal)) }
            return ordered(entry, RPCCall(method: method, id: id, params: p, connection: self))
        } catch let error as RPCError {
            return .now(RPCResponse(id: id ?? .null, error: error))
        } catch {
            logger.error("\(method) failed unexpectedly: \(type(of: error))")
            return .now(RPCResponse(id: id ?? .null, error: .internalError()))
        }
    }

    /// Runs a registered method in its declared order: at once when nothing earlier
    /// holds its key (answering on this thread if it can), else as a task that first
    /// waits for those requests' answers to be queued.
    private func ordered(_ entry: MethodRegistry.Entry, _ call: RPCCall) -> Reply {
        let ordering = entry.ordering(call.params)
        let admission = scheduler.admit(ordering)
        let id = call.id
        guard admission.waitFor.isEmpty else {
            let handler = entry.handler
            return .later(id, {
                for gate in admission.waitFor { await gate.wait() }
                try Task.checkCancellation()  // cancelled while waiting: it never runs
                switch try handler(call) {
                case .result(let value): return .result(value)
                case .encoded(let text): return .encoded(text)
                case .later(let work): return .result(try await work())
                }
            }, answered: admission.mine?.open)
        }
        let release = admission.mine?.open
        do {
            switch try entry.handler(call) {
            case .result(let value): return .now(RPCResponse(id: id ?? .null, result: value), then: release)
            case .encoded(let text): return .now(RPCResponse(id: id ?? .null, encodedResult: text), then: release)
            case .later(let work):
                let gate = admission.mine ?? scheduler.enterUse(ordering)
                return .later(id, { .result(try await work()) }, answered: gate?.open)
            }
        } catch let error as RPCError {
            return .now(RPCResponse(id: id ?? .null, error: error), then: release)
        } catch {
            logger.error("\(call.method) failed unexpectedly: \(type(of: error))")
            return .now(RPCResponse(id: id ?? .null, error: .internalError()), then: release)
        }
    }

    private func initialize(_ p: RPCParams) throws(RPCError) -> JSONValue {
        try p.rejectUnknown(allowed: ["protocolVersion", "clientInfo", "capabilities"])
        if let version = try p.optionalString("protocolVersion"), version != "1" {
            throw .invalidParams("protocolVersion \"\(version)\" is not supported; this agent speaks \"1\"")
        }
        if let info = try p.optionalObject("clientInfo") {
            let client = RPCParams(info)
            let name = try client.optionalString("name") ?? "unknown"
            let version = try client.optionalString("version") ?? "?"
            logger.info("host \(name) \(version) connected")
        }
        let capabilities = try p.optionalObject("capabilities")
        let already = lifecycle.withLock { l -> Bool in
            defer { l.initialized = true }
            return l.initialized
        }
        if already { throw .invalidRequest("initialize was already called") }
        if let capabilities { session?.initialized(capabilities: capabilities) }
        return [
            "protocolVersion": "1",
            "serverInfo": ["name": .string(options.serverName), "version": .string(options.serverVersion)],
            "capabilities": options.capabilities,
        ]
    }

    private static func answer(_ work: Work, id: JSONValue, logger: Logger) async -> RPCResponse {
        do {
            switch try await work() {
            case .result(let value): return RPCResponse(id: id, result: value)
            case .encoded(let text): return RPCResponse(id: id, encodedResult: text)
            }
        } catch let error as RPCError {
            return RPCResponse(id: id, error: error)
        } catch is CancellationError {
            return RPCResponse(id: id, error: .requestCancelled)
        } catch {
            logger.error("a request failed unexpectedly: \(type(of: error))")
            return RPCResponse(id: id, error: .internalError())
        }
    }

    /// Runs a request's work as a task, cancellable by its id; its answer goes
    /// to `deliver` unless a cancellation answered first.
    private func spawn(id: JSONValue?, _ work: @escaping Work, answered: (@Sendable () -> Void)?,
                       deliver: @escaping InFlightRequests.Deliver)
    {
        running.enter()
        let logger = self.logger
        guard let id else {
            Task {
                _ = await Self.answer(work, id: .null, logger: logger)
                answered?()
                self.running.leave()
            }
            return
        }
        let token = inFlight.begin(id, deliver: deliver)
        let task = Task {
            let response = await Self.answer(work, id: id, logger: logger)
            self.inFlight.finish(id, token: token)?(response)
            answered?()
            self.running.leave()
        }
        inFlight.attach(task, id: id, token: token)
    }

    // MARK: Batches

    private func handleBatch(_ items: [JSONValue]) {
        if items.isEmpty {
            enqueue(RPCResponse(id: .null, error: .invalidRequest("empty batch")))
            return
        }
        if items.count > options.maxBatch {
            enqueue(RPCResponse(id: .null, error: .invalidRequest("batch of \(items.count) messages; at most \(options.maxBatch) are accepted")))
            return
        }
        // Members run like lone requests (cancellable by id, answered once); the batch
        // collects their answers and is written when the last one is in.
        let batch = BatchAnswers()
        let output = self.output
        let deliver: InFlightRequests.Deliver = { response in
            if let all = batch.answer(response) { output.send { Self.writeBatch(all, to: &$0) } }
        }
        for item in items {
            switch handleMessage(item) {
            case .none: break
            case .now(let r, let then):
                batch.ready(r)
                then?()
            case .later(let id, let work, let answered):
                if id != nil { batch.expect() }
                spawn(id: id, work, answered: answered, deliver: deliver)
            }
        }
        if let all = batch.close(), !all.isEmpty {
            output.enqueue { Self.writeBatch(all, to: &$0) }
        }
    }

    private static func writeBatch(_ responses: [RPCResponse], to out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (i, r) in responses.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            r.write(to: &out)
        }
        out.append(UInt8(ascii: "]"))
    }
}
