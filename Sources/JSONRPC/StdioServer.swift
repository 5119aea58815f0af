import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs an `RPCConnection` over stdin/stdout until end of input, `exit` or a
/// termination signal. The only place in the engine that touches file
/// descriptors or signals.
public enum StdioServer {
    /// Reads stdin in large chunks, frames lines, dispatches them, and flushes
    /// the answers produced by each chunk with one write. Never returns: the
    /// process exits through `connection.finish()` or `exit`.
    public static func run(_ connection: RPCConnection, maxLineBytes: Int, input fd: Int32 = 0) -> Never {
        signal(SIGPIPE, SIG_IGN)
        let signals = [SIGTERM, SIGINT].map { sig -> DispatchSourceSignal in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { connection.finish() }
            source.resume()
            return source
        }
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        let capacity = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let handle: (LineFramer.Event) -> Void = { event in
            switch event {
            case .line(let line): connection.handleLine(line)
            case .oversized: connection.handleOversizedLine(limit: maxLineBytes)
            }
        }
        while true {
            let n = read(fd, buffer, capacity)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // A host may hand over a non-blocking stdin (or one socket for both directions).
                    SystemCalls.waitUntilReady(fd, for: Int16(POLLIN))
                    continue
                }
                break
            }
            if n == 0 { break }
            framer.feed(UnsafeBufferPointer(start: buffer, count: n), handle)
            connection.output.flush()
        }
        framer.finish(handle)
        connection.output.flush()
        connection.finish()
        withExtendedLifetime(signals) {}
        // finish() exits the process; reaching here means another thread is already exiting.
        while true { pause() }
    }
}
