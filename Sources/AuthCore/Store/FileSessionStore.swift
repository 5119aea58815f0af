#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Sessions as one private file per provider, shared by every agent process of the user.
///
/// Tokens are credentials, so the directory is 0700 and files 0600, and writes
/// are atomic (see `AtomicFile`): a crash or a concurrent reader never sees half
/// a session. A file that cannot be read as a session is moved aside to
/// `<provider>.json.corrupt-<unix time>` (kept 30 days for inspection, see `StoreDirectoryTidy`)
/// and the provider starts logged out, rather than the agent refusing to start.
/// The provider lock is a `flock` on `<provider>.lock` so that concurrent agents
/// refresh a token once, not once each.
public final class FileSessionStore: SessionStore {
    /// The directory as a file URL, made when asked (FoundationEssentials' URL is a parser: a
    /// one-shot helper that never asks spares it).
    public var directory: URL { URL(fileURLWithPath: path, isDirectory: true) }
    /// The directory's path, as `URL.path` gives it.
    let path: String
    private let warn: @Sendable (String) -> Void

    private static let maxFileBytes = 1 << 20

    /// Creates the directory (and missing parents) with mode 0700; an existing
    /// directory open to other users is tightened to 0700 with a warning. Throws
    /// when the directory is a symlink, belongs to another user or cannot be created.
    public convenience init(directory: URL, warn: @escaping @Sendable (String) -> Void) throws {
        try self.init(path: directory.path, warn: warn)
    }

    /// `path`: as `URL(fileURLWithPath:).path` gives it (`directoryPath`).
    init(path: String, warn: @escaping @Sendable (String) -> Void) throws {
        self.path = path
        self.warn = warn
        try FileSessionStore.prepare(path, warn: warn)
        StoreDirectoryTidy.run(path)
    }

    /// The path `URL(fileURLWithPath: text, isDirectory: true).path` gives, without building the
    /// URL when that is `text` itself — an absolute path with no empty, `.` or `..` segment and no
    /// trailing slash, the usual case (building and reading the URL was 4 % of a helper's start).
    static func directoryPath(_ text: String) -> String {
        isPlainAbsolute(Array(text.utf8)) ? text : URL(fileURLWithPath: text, isDirectory: true).path
    }

    private static func isPlainAbsolute(_ b: [UInt8]) -> Bool {
        let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
        guard b.count > 1, b[0] == slash, b[b.count - 1] != slash else { return false }
        var start = 1
        for i in 1...b.count where i == b.count || b[i] == slash {
            let length = i - start
            if length == 0 || (length == 1 && b[start] == dot) || (length == 2 && b[start] == dot && b[start + 1] == dot) { return false }
            start = i + 1
        }
        return true
    }

    /// `defaultDirectory(environment:)`'s path.
    static func defaultDirectoryPath(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return directoryPath(state + "/auth-agent") }
        if let home = environment["HOME"], !home.isEmpty { return directoryPath(home + "/.local/state/auth-agent") }
        return defaultDirectory(environment: environment).path
    }

    /// `$XDG_STATE_HOME/auth-agent`, else `$HOME/.local/state/auth-agent`.
    /// A relative `XDG_STATE_HOME` is ignored, as the XDG specification requires.
    public static func defaultDirectory(environment: [String: String]) -> URL {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
            return URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent("auth-agent", isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true)
            .appendingPathComponent(".local/state/auth-agent", isDirectory: true)
    }

    /// A record whose tokens are in the keyring (written by `keyring` or `auto`) is
    /// `unavailable`, not corrupt: this store never reads the keyring, and setting
    /// the record aside would log the account out of every agent for good.
    public func load(_ provider: String) throws -> Session? {
        switch try loadRecord(provider, decode: StoredRecord.decode) {
        case nil: return nil
        case .plaintext(let session, _)?: return session
        case .reference?: throw StoredRecord.heldInKeyring("the store kind is file")
        }
    }

    /// Reads the provider's file with every check of `load` and decodes it with
    /// `decode`; a file `decode` rejects is set aside. The keyring store keeps
    /// its non-secret records in these files through this and `saveRecord`.
    func loadRecord<Record>(_ provider: String, decode: ([UInt8]) throws(SessionFormatError) -> Record) throws -> Record? {
        let file = try sessionPath(provider)
        // O_NONBLOCK so that a FIFO planted at the path cannot hang the agent.
        let fd = POSIX.open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw POSIX.failure("open", file)
        }
        defer { POSIX.close(fd) }
        guard let st = POSIX.status(fd) else { throw POSIX.failure("inspect", file) }
        guard st.st_mode & S_IFMT == S_IFREG else {
            setAside(file, openedAs: st, reason: "not a regular file")
            return nil
        }
        if st.st_mode & 0o077 != 0 {
            warn("\(file) was accessible to other users; its mode is now 0600")
            _ = fchmod(fd, 0o600)
        }
        guard let bytes = POSIX.readAll(fd, limit: FileSessionStore.maxFileBytes) else {
            guard errno == EFBIG else { throw POSIX.failure("read", file) }
            setAside(file, openedAs: st, reason: "larger than 1 MiB")
            return nil
        }
        do {
            return try decode(bytes)
        } catch {
            setAside(file, openedAs: st, reason: error.problem)
            return nil
        }
    }

    public func save(_ session: Session, for provider: String) throws {
        try saveRecord(SessionFileFormat.encode(session), for: provider)
    }

    /// Replaces the provider's file atomically with `bytes`. A record the reader
    /// would set aside (over 1 MiB) is refused and the old one kept: writing it
    /// would log the account out at the next read.
    func saveRecord(_ bytes: [UInt8], for provider: String) throws {
        guard bytes.count <= FileSessionStore.maxFileBytes else {
            throw SessionStoreError.io("the session of \(StoreKeys.provider(of: provider)) would take \(bytes.count) bytes, "
                                       + "more than the 1 MiB a record may hold (a very large user profile?); nothing was written")
        }
        try AtomicFile.write(bytes, to: try sessionPath(provider), directory: path)
    }

    public func remove(_ provider: String) throws {
        let file = try sessionPath(provider)
        guard unlink(file) == 0 || errno == ENOENT else { throw POSIX.failure("remove", file) }
        POSIX.syncDirectory(path)
    }

    public func loadIndex(_ provider: String) throws -> AccountIndex? {
        try loadRecord(StoreKeys.index(of: provider), decode: AccountIndex.decode)
    }

    public func saveIndex(_ index: AccountIndex, for provider: String) throws {
        if index.accounts.isEmpty { return try remove(StoreKeys.index(of: provider)) }
        try saveRecord(index.encoded(), for: StoreKeys.index(of: provider))
    }

    public func indexStamp(_ provider: String) -> String? { modificationStamp(StoreKeys.index(of: provider)) }

    public func loadDocument(_ key: String) throws -> [UInt8]? { try loadRecord(key) { $0 } }

    public func saveDocument(_ bytes: [UInt8]?, key: String) throws {
        guard let bytes else { return try remove(key) }
        try saveRecord(bytes, for: key)
    }

    public func documentStamp(_ key: String) -> String? { modificationStamp(key) }

    public func tryLock(_ provider: String) throws -> StoreLock? {
        let lockPath = "\(path)/\(try FileSessionStore.checkedName(provider)).lock"
        guard let fd = try FileLock.acquire(lockPath, timeout: 0) else { return nil }
        return StoreLock { FileLock.release(fd) }
    }

    /// `inode-mtime.nanoseconds-size` of the provider's file, or `nil` when there
    /// is none: a cheap `stat` that changes whenever any process saves or removes it.
    public func modificationStamp(_ provider: String) -> String? {
        guard let file = try? sessionPath(provider), let st = POSIX.status(file) else { return nil }
        let (seconds, nanoseconds) = POSIX.modificationNanoseconds(st)
        return "\(st.st_ino)-\(seconds).\(nanoseconds)-\(st.st_size)"
    }

    private func sessionPath(_ provider: String) throws(SessionStoreError) -> String {
        "\(path)/\(try FileSessionStore.checkedName(provider)).json"
    }

    /// Store keys become file names, so only `[A-Za-z0-9._+-]`, and not `.` or `..`.
    static func checkedName(_ provider: String) throws(SessionStoreError) -> String {
        let allowed = provider.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
        }
        guard allowed, !provider.isEmpty, provider.utf8.count <= 128, provider != ".", provider != ".." else {
            throw SessionStoreError.io("invalid provider name for a file name")
        }
        return provider
    }

    /// Renames an unreadable file out of the way, unless it was replaced since it
    /// was opened (another process may just have saved a good session there). Its name carries the
    /// wall-clock time (`Date()`, not the core's `Clock`: a stamp for the person who finds it and for
    /// `StoreDirectoryTidy`, no wait — an exemption listed in `WaitsOnTheClockTests`).
    private func setAside(_ file: String, openedAs opened: stat, reason: String) {
        guard let current = POSIX.status(file), current.st_ino == opened.st_ino, current.st_dev == opened.st_dev else {
            return
        }
        let base = "\(file).corrupt-\(Int(Date().timeIntervalSince1970))"
        var target = base
        var attempt = 1
        while POSIX.status(target) != nil {
            target = "\(base)-\(attempt)"
            attempt += 1
        }
        if rename(file, target) == 0 {
            POSIX.syncDirectory(path)
            warn("\(file) could not be read (\(reason)); moved it to \(target) and starting logged out")
        } else {
            warn("\(file) could not be read (\(reason)) nor moved aside (\(POSIX.errorText())); starting logged out")
        }
    }

    private static func prepare(_ directory: String, warn: @Sendable (String) -> Void) throws {
        // An existing directory (every start but the first) needs no mkdir of each parent.
        let exists = POSIX.linkStatus(directory).map { $0.st_mode & S_IFMT == S_IFDIR } == true
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in exists ? [] : directory.split(separator: "/") {
            // Not `prefix += "/" + component`: String + Substring is the generic `+`, whose witness
            // lookups at run time were 8 % of a helper's own start-up.
            prefix.append("/")
            prefix.append(contentsOf: component)
            if mkdir(prefix, 0o700) != 0 {
                let code = errno
                guard code == EEXIST || POSIX.status(prefix).map({ $0.st_mode & S_IFMT == S_IFDIR }) == true else {
                    throw POSIX.failure("create the directory", prefix, code)
                }
            }
        }
        // The store directory itself must not be a symlink: following it would put the
        // sessions (and the mode changes below) wherever the link points. Parents may be links.
        guard let st = POSIX.linkStatus(directory) else { throw POSIX.failure("inspect", directory) }
        if st.st_mode & S_IFMT == S_IFLNK {
            throw SessionStoreError.io("\(directory) is a symbolic link; use the directory it points to as the store path, or replace the link with a directory")
        }
        guard st.st_mode & S_IFMT == S_IFDIR else { throw SessionStoreError.io("\(directory) is not a directory") }
        guard st.st_uid == geteuid() else { throw SessionStoreError.io("\(directory) belongs to another user") }
        if st.st_mode & 0o077 != 0 {
            guard chmod(directory, 0o700) == 0 else { throw POSIX.failure("restrict the mode of", directory) }
            warn("\(directory) was accessible to other users; its mode is now 0700")
        }
    }
}
