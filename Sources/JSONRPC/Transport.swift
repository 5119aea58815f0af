/// One host's byte stream, as the engine serves it: bytes in, bytes out, an end.
///
/// Shaped like the MCP Swift SDK's `Transport` (connect, send, receive, disconnect) but at
/// the level the engine works at, and synchronous: that one is an actor handing out each
/// message through an `AsyncThrowingStream`, a task hop and an allocation per message, which
/// the pipelined `sign` path cannot afford. Here whole chunks of bytes come in on the
/// connection's own thread — the framing loop (`RPCConnection.serve`) splits them into lines
/// with `LineFramer`, without copying — and the answers of one read go out in one write
/// through `OutputSink`. There is no `connect`: a transport exists connected (the process's
/// stdin and stdout, an accepted socket, one end of an in-memory pair).
///
/// The engine has three: `StdioTransport` (one host, whose end is the process's),
/// `SocketTransport` (each connection `SocketServer` accepts) and `MemoryTransport` (a
/// host in the same process, for tests). The loop is generic over the transport rather
/// than taking `any Transport`, so each transport's loop is specialized and stdio's pays no
/// dynamic dispatch per line.
public protocol Transport: Sendable {
    /// Waits for input and copies up to `buffer.count` bytes of it into `buffer`; returns
    /// how many, and 0 at end of input, an error that ends it, or once disconnected.
    /// Called by the one thread that serves the connection.
    func receive(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int

    /// Writes all of `bytes`, waiting while the host is slow to read (its backpressure);
    /// false when the host has gone away. Called under `OutputSink`'s lock, from any thread.
    func send(_ bytes: UnsafeRawBufferPointer) -> Bool

    /// Ends the connection in both directions: a `receive` under way or to come returns 0,
    /// and the host sees the end. Idempotent, from any thread.
    func disconnect()

    /// Whether `disconnect` was called: a line read before it but not yet handled is not
    /// served (the lines behind an `exit` in one read). Asked once per line.
    var isDisconnected: Bool { get }
}

/// Builds the connection a server serves over a transport it made (`SocketServer` for each
/// accepted socket, `MemoryTransport.serve`): given the output to write to, and what the
/// connection's `finish` must call — which disconnects that transport.
public typealias MakeConnection = @Sendable (_ output: OutputSink, _ onExit: @escaping @Sendable (Int32) -> Void) -> RPCConnection

extension OutputSink {
    /// A sink writing to `transport`; `onClosed` runs once when the host stops reading.
    public convenience init(transport: some Transport, onClosed: @escaping @Sendable () -> Void) {
        self.init(write: { transport.send($0) }, onClosed: onClosed)
    }
}

extension RPCConnection {
    /// Serves a connection whose end is not the process's (a socket's, an in-memory pair's):
    /// reads until end of input or `disconnect`, lets in-flight requests finish within
    /// `finish`'s grace, cancels what still runs, drops whatever would still be written, frees
    /// the host's session and disconnects. Returns once all that is done; call it on a thread
    /// of the connection's own.
    public func serve<T: Transport>(_ transport: T, maxLineBytes: Int) {
        readLines(from: transport, maxLineBytes: maxLineBytes)
        finish()  // a no-op after `exit`, which ran it already
        cancelInFlight()
        output.close()
        session?.closed()
        transport.disconnect()
    }

    /// The framing loop: reads in large chunks, frames lines, dispatches them, and writes the
    /// answers produced by each read with one write. Returns at end of input, having failed
    /// the requests this agent sent the host that are still unanswered (nothing more comes
    /// from it).
    func readLines<T: Transport>(from transport: T, maxLineBytes: Int) {
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        let capacity = 64 * 1024
        let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        defer { buffer.deallocate() }
        let handle: (LineFramer.Event) -> Void = { event in
            guard !transport.isDisconnected else { return }
            switch event {
            case .line(let line): self.handleLine(line)
            case .oversized: self.handleOversizedLine(limit: maxLineBytes)
            }
        }
        while true {
            let n = transport.receive(into: buffer)
            if n <= 0 { break }
            framer.feed(UnsafeBufferPointer(rebasing: buffer[0..<n]), handle)
            output.flush()
        }
        framer.finish(handle)
        output.flush()
        failHostRequests()
    }
}
