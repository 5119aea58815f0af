#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the system calls the file store needs, retrying on
/// `EINTR` and turning failures into `SessionStoreError.io` with `strerror` text.
enum POSIX {
    static func errorText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }

    static func failure(_ what: String, _ path: String, _ code: Int32 = errno) -> SessionStoreError {
        .io("cannot \(what) \(path): \(errorText(code))")
    }

    /// Opens `path`, retrying on `EINTR`; returns the descriptor or -1 with `errno` set.
    static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        while true {
            #if canImport(Glibc)
            let fd = Glibc.open(path, flags, mode)
            #else
            let fd = Darwin.open(path, flags, mode)
            #endif
            if fd >= 0 || errno != EINTR { return fd }
        }
    }

    static func close(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                #else
                let n = Darwin.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                #endif
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
    }

    /// Reads to end of file; `nil` with `errno` set on failure, or when more than `limit` bytes.
    static func readAll(_ fd: Int32, limit: Int) -> [UInt8]? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { buffer in
                #if canImport(Glibc)
                Glibc.read(fd, buffer.baseAddress, buffer.count)
                #else
                Darwin.read(fd, buffer.baseAddress, buffer.count)
                #endif
            }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<n])
            if out.count > limit {
                errno = EFBIG
                return nil
            }
        }
    }

    /// `stat(2)`, following symlinks; `nil` with `errno` set on failure.
    static func status(_ path: String) -> stat? {
        var st = stat()
        return stat(path, &st) == 0 ? st : nil
    }

    /// `lstat(2)`: the link itself when `path` is a symlink; `nil` with `errno` set on failure.
    static func linkStatus(_ path: String) -> stat? {
        var st = stat()
        return lstat(path, &st) == 0 ? st : nil
    }

    static func status(_ fd: Int32) -> stat? {
        var st = stat()
        return fstat(fd, &st) == 0 ? st : nil
    }

    /// Flushes a directory's entries (a rename or unlink in it) to disk.
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }

    /// Modification time of a stat record in nanoseconds, portable across stat layouts.
    static func modificationNanoseconds(_ st: stat) -> (Int, Int) {
        #if canImport(Glibc)
        return (Int(st.st_mtim.tv_sec), Int(st.st_mtim.tv_nsec))
        #else
        return (Int(st.st_mtimespec.tv_sec), Int(st.st_mtimespec.tv_nsec))
        #endif
    }
}
