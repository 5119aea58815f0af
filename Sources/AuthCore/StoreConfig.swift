/// Where sessions are kept: files (surviving restarts, shared by the user's
/// agents) or memory (never written to disk, lost on exit).
public enum StoreConfig: Sendable, Equatable {
    /// `path` overrides `FileSessionStore.defaultDirectory`; an absolute path when given.
    case file(path: String?)
    case memory
}
