#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Runs an `RPCConnection` over stdin/stdout until end of input, `exit` or a
/// termination signal. The only place in the engine that touches file
/// descriptors or signals.
public enum StdioServer {
    /// Work that need not run before `delay` seconds have passed: it runs on
    /// the reading thread once they have — while the loop waits for input, or
    /// between two reads when input never stops — and not at all in a process
    /// that ends sooner (a cold start answering one request).
    public struct Deferred: Sendable {
        public let delay: Double
        public let run: @Sendable () -> Void

        public init(after delay: Double, _ run: @escaping @Sendable () -> Void) {
            self.delay = delay
            self.run = run
        }
    }

    /// Reads stdin in large chunks, frames lines, dispatches them, and flushes
    /// the answers produced by each chunk with one write. Never returns: the
    /// process exits through `connection.finish()` or `exit`.
    public static func run(_ connection: RPCConnection, maxLineBytes: Int, input fd: Int32 = 0, deferred: Deferred? = nil) -> Never {
        signal(SIGPIPE, SIG_IGN)
        onTerminationSignal { connection.finish() }
        var framer = LineFramer(maxLineBytes: maxLineBytes)
        let capacity = 64 * 1024
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        let handle: (LineFramer.Event) -> Void = { event in
            switch event {
            case .line(let line): connection.handleLine(line)
            case .oversized: connection.handleOversizedLine(limit: maxLineBytes)
            }
        }
        var pending = deferred.map { (due: monotonicSeconds() + $0.delay, run: $0.run) }
        while true {
            if let (due, run) = pending {
                let left = due - monotonicSeconds()
                if left <= 0 {
                    run()
                    pending = nil
                } else if !SystemCalls.waitUntilReady(fd, for: Int16(POLLIN), timeout: left) {
                    continue  // nothing to read yet: the time may have come
                }
            }
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
        // finish() exits the process; reaching here means another thread is already exiting.
        while true { pause() }
    }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Blocks SIGTERM and SIGINT in the calling thread, and so in every thread it starts
    /// afterwards. Call it first thing in `main`, before anything starts a thread (Dispatch
    /// timers, a server's threads): a thread started earlier could take the signal with its
    /// default action — the process killed instead of ended — before `run` waits for it.
    public static func holdTerminationSignals() {
        var signals = terminationSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    private static var terminationSignals: sigset_t {
        var signals = sigset_t()
        sigemptyset(&signals)
        for terminating in [SIGTERM, SIGINT] { sigaddset(&signals, terminating) }
        return signals
    }

    /// SIGTERM and SIGINT end the connection as end of input does (requests in
    /// flight are answered first). They are blocked in this thread — and so in
    /// every thread started after it — and taken by one thread in `sigwait`. So
    /// none is lost from here on (Dispatch's signal sources, installed later by
    /// its own thread, left a window in which one was ignored), and nothing has
    /// to start Dispatch before the first request.
    private static func onTerminationSignal(_ body: @escaping @Sendable () -> Void) {
        var signals = terminationSignals
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let waiting = DetachedThread.start { [signals] in
            var awaited = signals
            var received: Int32 = 0
            while sigwait(&awaited, &received) != 0 {}
            body()
        }
        // With no thread to take them, the signals get their default action back: they end the process.
        if !waiting { pthread_sigmask(SIG_UNBLOCK, &signals, nil) }
    }
}
