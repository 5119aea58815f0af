#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
        var text = line + "\n"
        text.withUTF8 { bytes in
            // Whole, through partial writes and signals; a stderr nobody reads is not waited on further.
            var offset = 0
            while offset < bytes.count {
                let n = write(2, bytes.baseAddress! + offset, bytes.count - offset)
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
