/// Failures of a `SessionStore`.
///
/// Messages name providers and files, never the contents of a session.
public enum SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another thread or process held the provider's lock for longer than the timeout.
    case lockTimeout(provider: String)
    /// A file-system operation failed; the text says which and why.
    case io(String)

    public var description: String {
        switch self {
        case .lockTimeout(let provider): return "timed out waiting for the session lock of provider \"\(provider)\""
        case .io(let message): return "session store: \(message)"
        }
    }
}
