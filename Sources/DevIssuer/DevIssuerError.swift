#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the issuer could not start; carries the failing system call so a port
/// clash in a test run reads as such instead of as a generic failure.
public enum DevIssuerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `start` was called while the issuer was already serving.
    case alreadyStarted
    /// A socket system call failed with `errno`.
    case socket(operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .alreadyStarted:
            return "dev issuer is already started"
        case .socket(let operation, let code):
            return "\(operation) failed: \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
