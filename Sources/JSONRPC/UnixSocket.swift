#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Unix-domain socket calls a socket agent and its clients need: a private
/// directory, a listener only its user can reach, the peer's credentials, and a
/// client connection with a deadline. Every descriptor is close-on-exec, so a
/// browser the agent starts never inherits the listener or a connection.
public enum UnixSocket {
    /// A socket call that failed, said the way a person reads it.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
        init(_ operation: String, _ path: String, errno code: Int32) {
            description = "\(operation) \(path): \(String(cString: strerror(code)))"
        }
    }

    /// Who is at the other end of a connected socket, as the kernel saw it at connect (or listen) time.
    public struct Peer: Sendable, Equatable {
        public let uid: uid_t
        /// Nil where the system does not say (macOS without `LOCAL_PEERPID`).
        public let pid: pid_t?
    }

    #if canImport(Glibc)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #else
    private static let streamType = SOCK_STREAM
    #endif

    /// `$XDG_RUNTIME_DIR/auth-agent/agent.sock`, else `/tmp/auth-agent-$UID/agent.sock`: a
    /// directory of the user's own, as ssh-agent and gpg-agent use.
    public static func defaultPath(environment: [String: String]) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/auth-agent/agent.sock"
        }
        return "/tmp/auth-agent-\(geteuid())/agent.sock"
    }

    /// Creates the socket's directory (0700) when missing; refuses one that another user
    /// owns or that others may enter, since whoever can write there can put a socket of
    /// their own where the tools will look for the agent's.
    public static func prepareDirectory(of path: String) throws(Failure) {
        guard let slash = path.lastIndex(of: "/") else { return }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw Failure("cannot create", directory, errno: errno)
        }
        var info = stat()
        guard lstat(directory, &info) == 0 else { throw Failure("cannot inspect", directory, errno: errno) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { throw Failure("\(directory) is not a directory") }
        guard info.st_uid == geteuid() else {
            throw Failure("\(directory) belongs to uid \(info.st_uid), not to this user (\(geteuid())): refusing to put the agent's socket there")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Failure("\(directory) is open to other users (mode \(String(info.st_mode & 0o777, radix: 8))): refusing to put the agent's socket there; chmod 700 it")
        }
    }

    /// A listening socket at `path`, mode 0600 from the start (bound under a umask that
    /// lets no one else in, so there is no moment at which another user could connect).
    public static func listen(at path: String, backlog: Int32 = 128) throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, streamType, 0)
        guard fd >= 0 else { throw Failure("cannot create a socket for", path, errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let previous = umask(0o177)
        let bound = withAddress(path) { bind(fd, $0, $1) }
        let bindError = errno
        umask(previous)
        guard let bound else { close(fd); throw Failure("socket path longer than \(maxPathBytes) bytes: \(path)") }
        guard bound == 0 else { close(fd); throw Failure("cannot bind", path, errno: bindError) }
        guard systemListen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            unlink(path)
            throw Failure("cannot listen on", path, errno: code)
        }
        return fd
    }

    /// Connects to the agent at `path`; the descriptor is blocking, with reads and writes
    /// bounded by `timeout` seconds (a stuck agent must not hang a git prompt).
    public static func connect(to path: String, timeout: Double) throws(Failure) -> Int32 {
        let fd = socket(AF_UNIX, streamType, 0)
        guard fd >= 0 else { throw Failure("cannot create a socket for", path, errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        #if canImport(Darwin)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        setTimeout(fd, timeout)
        let connected = withAddress(path) { systemConnect(fd, $0, $1) }
        let code = errno
        guard let connected else { close(fd); throw Failure("socket path longer than \(maxPathBytes) bytes: \(path)") }
        guard connected == 0 else { close(fd); throw Failure("cannot connect to", path, errno: code) }
        return fd
    }

    /// Bounds each later read and write on `fd` by `seconds` (0: no bound).
    public static func setTimeout(_ fd: Int32, _ seconds: Double) {
        var limit = timeval(tv_sec: Int(seconds), tv_usec: .init((seconds - Double(Int(seconds))) * 1e6))
        for option in [SO_RCVTIMEO, SO_SNDTIMEO] {
            setsockopt(fd, SOL_SOCKET, option, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
    }

    /// The peer's user (and process) of a connected socket; nil when the system will not say.
    public static func peer(of fd: Int32) -> Peer? {
        #if os(Linux)
        // struct ucred {pid_t pid; uid_t uid; gid_t gid;} (Glibc hides it behind _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
        var size = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else { return nil }
        return Peer(uid: credentials.uid, pid: credentials.pid)
        #else
        var uid = uid_t(0), gid = gid_t(0)
        guard getpeereid(fd, &uid, &gid) == 0 else { return nil }
        var pid = pid_t(0)
        var size = socklen_t(MemoryLayout<pid_t>.size)
        let known = getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &size) == 0
        return Peer(uid: uid, pid: known ? pid : nil)
        #endif
    }

    /// What `sockaddr_un.sun_path` holds, less its terminating NUL.
    static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    /// Calls `body` with `path` as a `sockaddr_un`; nil when the path does not fit.
    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32? {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count <= maxPathBytes else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}

// `listen` and `connect` are shadowed by `UnixSocket`'s own methods inside the type.
private func systemListen(_ fd: Int32, _ backlog: Int32) -> Int32 { listen(fd, backlog) }
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
