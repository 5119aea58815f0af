#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// Leveled logging to stderr, never stdout (stdout carries protocol messages only).
///
/// Callers must not pass secrets; messages name providers and hosts, not tokens.
public struct Logger: Sendable {
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case error, warn, info, debug
        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }
        public var name: String {
            switch self {
            case .error: return "error"
            case .warn: return "warn"
            case .info: return "info"
            case .debug: return "debug"
            }
        }
        public init?(name: String) {
            guard let l = Level.allCases.first(where: { $0.name == name }) else { return nil }
            self = l
        }
    }

    public let level: Level
    private let sink: @Sendable (String) -> Void

    public init(level: Level, sink: @escaping @Sendable (String) -> Void = Logger.stderrSink) {
        self.level = level
        self.sink = sink
    }

    public static let stderrSink: @Sendable (String) -> Void = { line in
        StderrLiveLine.state.withLock { state in
            // A live line (a login's countdown) is cleared first: the log line takes its place, and it is drawn again below.
            if state.shown { state.cleared += 1 }
            writeAll(2, (state.shown ? "\r\u{1B}[K" : "") + line + "\n")
        }
    }

    /// `text` on `fd` whole, through partial writes and signals; a stream nobody reads is not waited on further.
    static func writeAll(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }

    public func log(_ l: Level, _ message: @autoclosure () -> String) {
        guard l <= level else { return }
        sink("auth-agent: \(l.name): \(message())")
    }

    public func error(_ m: @autoclosure () -> String) { log(.error, m()) }
    public func warn(_ m: @autoclosure () -> String) { log(.warn, m()) }
    public func info(_ m: @autoclosure () -> String) { log(.info, m()) }
    public func debug(_ m: @autoclosure () -> String) { log(.debug, m()) }
}

/// A line kept current on stderr by rewriting it in place (a login's countdown): while it is
/// shown, a log line first clears it, so a warning never lands on it, and the line's owner draws
/// it again (`cleared` moved). Its writes and the log's share one lock, so neither cuts the other.
public enum StderrLiveLine {
    static let state = Locked((shown: false, cleared: 0))

    /// Draws `text` as the live line (replacing what it showed); returns `cleared`, to tell when a log line cleared it.
    @discardableResult
    public static func draw(_ text: String) -> Int {
        state.withLock { state in
            state.shown = true
            Logger.writeAll(2, "\r\u{1B}[K" + text)
            return state.cleared
        }
    }

    /// Clears the line and stops treating stderr as holding one.
    public static func end() {
        state.withLock { state in
            if state.shown { Logger.writeAll(2, "\r\u{1B}[K") }
            state.shown = false
        }
    }

    /// How many times a log line cleared the live line: changed since a draw, it must be drawn again.
    public static var cleared: Int { state.current.cleared }
}
