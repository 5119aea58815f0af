/// Failures of a `SessionStore`.
///
/// Messages name providers and files, never the contents of a session.
public enum SessionStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Another thread or process held the provider's lock for longer than the timeout.
    case lockTimeout(provider: String)
    /// A file-system operation failed; the text says which and why.
    case io(String)
    /// The keyring holding the secrets is locked or not answering; the text says what it said.
    /// Passing: the session is kept and the same request can succeed once the keyring is back.
    case unavailable(String)

    public var description: String {
        switch self {
        case .lockTimeout(let provider): return "timed out waiting for the session lock of provider \"\(provider)\""
        case .io(let message): return "session store: \(message)"
        case .unavailable(let message): return "keyring: \(message)"
        }
    }
}
