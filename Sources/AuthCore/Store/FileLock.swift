#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock(2)` on a lock file, shared by every agent process of the user.
///
/// Each acquisition opens its own descriptor, so two threads of one process
/// exclude each other just as two processes do (flock locks belong to the open
/// file description). The kernel drops the lock when the descriptor closes,
/// including when the process dies, so a crash never leaves a stale lock. The
/// lock file is never deleted: unlinking it would let a waiter lock an orphan.
enum FileLock {
    /// Polls a non-blocking `flock` with short sleeps until `timeout` seconds;
    /// returns the locked descriptor, or `nil` on timeout.
    static func acquire(_ path: String, timeout: Double) throws(SessionStoreError) -> Int32? {
        let fd = POSIX.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            // O_NOFOLLOW: a symlink planted here must not make the agent create or lock a file elsewhere.
            if errno == ELOOP { throw SessionStoreError.io("\(path) is a symbolic link; remove it (a lock file must be a regular file)") }
            throw POSIX.failure("open the lock file", path)
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int64(max(0, timeout) * 1000)))
        var pause = 1_000  // microseconds, doubling to 25 ms
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return fd }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK || code == EAGAIN else {
                POSIX.close(fd)
                throw POSIX.failure("lock", path, code)
            }
            let now = clock.now
            guard now < deadline else {
                POSIX.close(fd)
                return nil
            }
            let remaining = now.duration(to: deadline).components
            let remainingMicros = Int(remaining.seconds) * 1_000_000 + Int(remaining.attoseconds / 1_000_000_000_000)
            usleep(useconds_t(max(1, min(pause, remainingMicros))))
            pause = min(pause * 2, 25_000)
        }
    }

    static func release(_ fd: Int32) {
        _ = flock(fd, LOCK_UN)
        POSIX.close(fd)
    }
}
