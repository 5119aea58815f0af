#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AgentConfig {
    /// The configuration decides which endpoints receive passwords and refresh tokens, so,
    /// like ssh with `~/.ssh/config`, a file that someone else could have written is refused:
    /// one owned by another user than this process's (root excepted: files a system manages,
    /// such as a Nix store link, belong to root) or writable by its group or by others.
    /// Checked on the open descriptor, so it is the file read that is checked. Returns its mode.
    static func checkAccess(_ fd: Int32, path: String) throws(ConfigError) -> mode_t {
        guard let st = POSIX.status(fd) else {
            throw ConfigError(file: path, path: "$", problem: "cannot inspect the file: \(POSIX.errorText())")
        }
        if st.st_uid != geteuid() && st.st_uid != 0 {
            throw ConfigError(file: path, path: "$", problem: "the file belongs to another user (uid \(st.st_uid)), who could change "
                + "where tokens and passwords go; use a configuration file of your own")
        }
        if st.st_mode & 0o022 != 0 {
            let mode = String(st.st_mode & 0o777, radix: 8)
            throw ConfigError(file: path, path: "$", problem: "other users can write the file (mode \(mode)) and so change where "
                + "tokens and passwords go; run: chmod go-w \(path)")
        }
        return st.st_mode
    }

    /// Whether the file holds a client secret (a provider's, a flow's or a configured server's):
    /// such a file is for its owner's eyes, as `~/.ssh/id_*` is.
    public var holdsSecret: Bool {
        providers.contains { $0.clientSecret != nil || $0.flowClients.values.contains { $0.clientSecret != nil } }
            || clients.contains { $0.clientSecret != nil }
    }

    /// What to tell the user when a file holding a secret can be read by others (mode `mode`);
    /// nil when it cannot, or holds none. Said at every start and by `config check`, not refused:
    /// the secret may already have been read, and a client secret is rotated at the server.
    func readableSecretWarning(mode: mode_t, path: String) -> String? {
        guard holdsSecret, mode & 0o044 != 0 else { return nil }
        return "\(path) holds a client secret and other users can read it (mode \(String(mode & 0o777, radix: 8))); run: chmod go-r \(path)"
    }
}
