#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The baseline: copies stdin to stdout as it arrives, the least work any
/// line-oriented process can do per message.
enum Echo {
    static func run() -> Never {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 1 << 16, alignment: 1)
        while true {
            let n = read(0, buffer, 1 << 16)
            if n <= 0 { exit(0) }
            var off = 0
            while off < n {
                let w = Glibc_write(1, buffer + off, n - off)
                if w <= 0 { exit(0) }
                off += w
            }
        }
    }
}
