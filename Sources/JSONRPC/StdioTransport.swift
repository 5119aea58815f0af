#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's stdin and stdout as a transport: the host that spawned the agent.
///
/// Its end is the process's: end of input, `exit`, a signal or a stdout nobody reads end
/// the process (`StdioServer.run`, the connection's `onExit`), so it is never disconnected
/// while it is served and `disconnect` has nothing to do.
public final class StdioTransport: Transport, @unchecked Sendable {
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

    private let input: Int32
    private let output: Int32
    /// Touched only by the reading thread, in `receive`.
    private var pending: (due: Double, run: @Sendable () -> Void)?

    public init(input: Int32 = 0, output: Int32 = 1, deferred: Deferred? = nil) {
        self.input = input
        self.output = output
        pending = deferred.map { (Self.monotonicSeconds() + $0.delay, $0.run) }
    }

    public func receive(into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        while true {
            if let (due, run) = pending {
                let left = due - Self.monotonicSeconds()
                if left <= 0 {
                    run()
                    pending = nil
                } else if !SystemCalls.waitUntilReady(input, for: Int16(POLLIN), timeout: left) {
                    continue  // nothing to read yet: the time may have come
                }
            }
            let n = read(input, buffer.baseAddress, buffer.count)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    // A host may hand over a non-blocking stdin (or one socket for both directions).
                    SystemCalls.waitUntilReady(input, for: Int16(POLLIN))
                    continue
                }
                return 0
            }
            return n
        }
    }

    /// A full pipe is the host's backpressure: the writer waits for it as long as the host
    /// keeps its end open — in write(2) on a blocking descriptor, in `poll` on a non-blocking
    /// one (never spinning on `EAGAIN`). What must not wait forever is the exit, which is why
    /// `OutputSink.flush(before:)` exists.
    public func send(_ bytes: UnsafeRawBufferPointer) -> Bool { SystemCalls.writeAll(output, bytes) }

    /// Nothing to do: stdio's end is the process's.
    public func disconnect() {}

    public var isDisconnected: Bool { false }

    private static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
