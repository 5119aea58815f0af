#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Runs an `RPCConnection` over stdin/stdout until end of input, `exit` or a
/// termination signal: the engine's one place for signals.
public enum StdioServer {
    /// Serves `connection` over `transport` (stdin and stdout): reads, frames lines,
    /// dispatches them, and flushes the answers produced by each read with one write (the
    /// engine's one framing loop, `RPCConnection.readLines`). Never returns: the process
    /// exits through `connection.finish()` or `exit` — stdio's host is the process's only
    /// one, so its end is the process's.
    public static func run(_ connection: RPCConnection, over transport: StdioTransport, maxLineBytes: Int) -> Never {
        signal(SIGPIPE, SIG_IGN)
        onTerminationSignal { connection.finish() }
        connection.readLines(from: transport, maxLineBytes: maxLineBytes)
        connection.finish()
        // finish() exits the process; reaching here means another thread is already exiting.
        while true { pause() }
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
