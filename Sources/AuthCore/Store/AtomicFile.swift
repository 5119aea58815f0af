#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Replaces a file so that readers see either the old contents or the new,
/// never a mix, and a crash leaves one of the two on disk.
///
/// The new contents go to a fresh private file (created with `O_EXCL`, mode
/// 0600, in the same directory so the rename stays on one file system), are
/// flushed with `fsync`, then renamed over the target; the directory is synced
/// so the rename itself survives a power loss.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String, directory: String) throws(SessionStoreError) {
        let name = path.split(separator: "/").last.map(String.init) ?? "file"
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = POSIX.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw POSIX.failure("create", temporary) }
        var committed = false
        defer { if !committed { unlink(temporary) } }
        guard fchmod(fd, 0o600) == 0, POSIX.writeAll(fd, bytes), fsync(fd) == 0 else {
            let code = errno
            POSIX.close(fd)
            throw POSIX.failure("write", temporary, code)
        }
        POSIX.close(fd)
        guard rename(temporary, path) == 0 else { throw POSIX.failure("replace", path) }
        committed = true
        POSIX.syncDirectory(directory)
    }
}
