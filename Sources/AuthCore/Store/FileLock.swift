#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// An exclusive `flock(2)` on a lock file, shared by every agent process of the user.
///
/// Each acquisition opens its own descriptor, so two threads of one process
/// exclude each other just as two processes do (flock locks belong to the open
/// file description). The kernel drops the lock when the descriptor closes,
/// including when the process dies, so a crash never leaves a stale lock. The
/// lock file is never deleted: unlinking it would let a waiter lock an orphan.
enum FileLock {
    /// Polls a non-blocking `flock` until `timeout` seconds (`ThreadWait`: the callers are
    /// synchronous, and `flock` has no timed wait); returns the locked descriptor, or `nil` on timeout.
    static func acquire(_ path: String, timeout: Double) throws(SessionStoreError) -> Int32? {
        let fd = POSIX.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            // O_NOFOLLOW: a symlink planted here must not make the agent create or lock a file elsewhere.
            if errno == ELOOP { throw SessionStoreError.io("\(path) is a symbolic link; remove it (a lock file must be a regular file)") }
            throw POSIX.failure("open the lock file", path)
        }
        let attempt = { () throws(SessionStoreError) -> Int32? in
            while true {
                if flock(fd, LOCK_EX | LOCK_NB) == 0 { return fd }
                let code = errno
                if code == EINTR { continue }
                guard code == EWOULDBLOCK || code == EAGAIN else {
                    POSIX.close(fd)
                    throw POSIX.failure("lock", path, code)
                }
                return nil
            }
        }
        guard let locked = try ThreadWait().wait(timeout: timeout, until: attempt) else {
            POSIX.close(fd)
            return nil
        }
        return locked
    }

    static func release(_ fd: Int32) {
        _ = flock(fd, LOCK_UN)
        POSIX.close(fd)
    }
}
