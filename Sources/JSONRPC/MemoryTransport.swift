import Dispatch
import Locking

/// A host in the same process, for tests: the agent's end of an in-memory pair, served like
/// a socket connection (`RPCConnection.serve`), with `MemoryHost` at the other end writing
/// lines in and reading lines out — a connection and a method registry driven without a
/// process or a file descriptor:
///
///     let host = MemoryTransport.serve { output, onExit in
///         RPCConnection(registry: registry, output: output, logger: logger, session: session, onExit: onExit)
///     }
///     host.send(#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
///     host.readLine(timeout: 5)  // {"jsonrpc":"2.0","id":1,"result":{}}
///     host.close()               // the connection ends; `session.closed()` is called
public final class MemoryTransport: Transport, Sendable {
    private let inbound: MemoryPipe
    private let outbound: MemoryPipe
    private let hungUp = Locked(false)

    fileprivate init(inbound: MemoryPipe, outbound: MemoryPipe) {
        self.inbound = inbound
        self.outbound = outbound
    }

    /// Serves a connection over a new pair on a thread of its own, as `SocketServer` serves an
    /// accepted socket (`exit` and a host that stopped reading disconnect it); returns the
    /// host's end. `makeConnection` gets the output to write to and what `finish` must call.
    public static func serve(maxLineBytes: Int = 1 << 20, _ makeConnection: MakeConnection) -> MemoryHost {
        let toAgent = MemoryPipe(), toHost = MemoryPipe()
        let transport = MemoryTransport(inbound: toAgent, outbound: toHost)
        let connection = makeConnection(OutputSink(transport: transport, onClosed: { transport.disconnect() }), { _ in transport.disconnect() })
        if !DetachedThread.start({ connection.serve(transport, maxLineBytes: maxLineBytes) }) {
            transport.disconnect()
            connection.serve(transport, maxLineBytes: maxLineBytes)  // reads nothing: it only closes
        }
        return MemoryHost(toAgent: toAgent, toHost: toHost)
    }

    /// A connection whose host is the calling thread itself (`InlineHost`): no thread is started;
    /// each line the host sends is handled on the sender's thread, as the reader thread would.
    public static func inline(_ makeConnection: MakeConnection) -> InlineHost {
        let toAgent = MemoryPipe(), toHost = MemoryPipe()
        let transport = MemoryTransport(inbound: toAgent, outbound: toHost)
        let connection = makeConnection(OutputSink(transport: transport, onClosed: { transport.disconnect() }), { _ in transport.disconnect() })
        return InlineHost(connection: connection, toHost: toHost)
    }

    public func receive(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int { inbound.read(into: buffer) }

    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool { outbound.write(bytes) }

    public func disconnect() {
        hungUp.withLock { $0 = true }
        inbound.close()
        outbound.close()
    }

    public var isDisconnected: Bool { hungUp.current }
}

/// The host's end of an in-memory pair: lines in, lines out, close.
public final class MemoryHost: Sendable {
    private let toAgent: MemoryPipe
    private let toHost: MemoryPipe

    fileprivate init(toAgent: MemoryPipe, toHost: MemoryPipe) {
        self.toAgent = toAgent
        self.toHost = toHost
    }

    /// Writes `line` and its newline; false once the agent's end is closed.
    @discardableResult
    public func send(_ line: String) -> Bool {
        Array((line + "\n").utf8).withUnsafeBytes { toAgent.write($0) }
    }

    /// Writes `bytes` as they are (any framing, any encoding): what a host may put on a pipe.
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { toAgent.write($0) } }

    /// The host stops writing but goes on reading, as a process's stdin closing: the agent
    /// reads end of input, answers what is in flight, and its output ends when it has.
    public func closeInput() { toAgent.close() }

    /// The agent's next line (without its newline); nil at the end of its output, or when
    /// `timeout` seconds pass first.
    public func readLine(timeout: Double) -> String? {
        (toHost.readLine(before: .now() + timeout) ?? nil).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The agent's next line; `.some(nil)` at the end of its output, nil when `timeout` seconds pass first.
    func readLineOrEnd(timeout: Double) -> [UInt8]?? { toHost.readLine(before: .now() + timeout) }

    /// The host goes away: the agent reads end of input, and whatever it writes is dropped.
    public func close() {
        toAgent.close()
        toHost.close()
    }
}

/// The host's end of a connection served on the host's own thread (`MemoryTransport.inline`): a
/// line sent is framed and handled there and then, its immediate answers flushed to the pipe the
/// host reads, as `readLines` does for a reader thread; answers of work that waits arrive on that
/// pipe from the work's task. For a process whose one host is itself (the command line's own
/// agent), where starting a reader thread and handing each line over to it was most of the cost
/// of a call. Sends from other threads (a `$/cancelRequest` on Ctrl-C) are serialized with it.
public final class InlineHost: ClientChannel, Sendable {
    private let connection: RPCConnection
    private let toHost: MemoryPipe
    private let handling = Lock()

    fileprivate init(connection: RPCConnection, toHost: MemoryPipe) {
        self.connection = connection
        self.toHost = toHost
    }

    /// Handles `line` (one message and its newline) now, on this thread.
    public func send(_ line: [UInt8]) -> Bool {
        let body = line.last == 0x0A ? line.dropLast() : line[...]
        handling.lock()
        defer { handling.unlock() }
        body.withUnsafeBufferPointer { connection.handleLine($0) }
        connection.output.flush()
        return true
    }

    public func nextLine(timeout: Double) -> ClientRead {
        switch toHost.readLine(before: .now() + timeout) {
        case .some(let line?): return .line(line)
        case .some(nil): return .closed
        case nil: return .timedOut
        }
    }
}

/// Bytes from one end to the other, with an end: what a socket's one direction is.
private final class MemoryPipe: Sendable {
    private struct State {
        var bytes: [UInt8] = []
        var closed = false
    }

    private let state = Locked(State())
    /// Signalled at every write and at the close; a reader rechecks the state after each.
    private let changed = DispatchSemaphore(value: 0)

    /// False once closed: nobody reads this any more.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let open = state.withLock { s -> Bool in
            if !s.closed { s.bytes.append(contentsOf: bytes) }
            return !s.closed
        }
        if open { changed.signal() }
        return open
    }

    func close() {
        state.withLock { $0.closed = true }
        changed.signal()
    }

    /// Waits for bytes; 0 once closed and drained.
    func read(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        while true {
            let (n, closed) = state.withLock { s -> (Int, Bool) in
                let n = min(buffer.count, s.bytes.count)
                _ = buffer.initialize(from: s.bytes[0..<n])
                s.bytes.removeFirst(n)
                return (n, s.closed)
            }
            if n > 0 || closed { return n }
            changed.wait()
        }
    }

    /// The next whole line, without its newline; `.some(nil)` once closed with no whole line left, nil at `deadline`.
    func readLine(before deadline: DispatchTime) -> [UInt8]?? {
        while true {
            let (line, closed) = state.withLock { s -> ([UInt8]?, Bool) in
                guard let newline = s.bytes.firstIndex(of: 0x0A) else { return (nil, s.closed) }
                let line = Array(s.bytes[..<newline])
                s.bytes.removeFirst(newline + 1)
                return (line, s.closed)
            }
            if let line { return .some(line) }
            if closed { return .some(nil) }
            if changed.wait(timeout: deadline) == .timedOut { return nil }
        }
    }
}
