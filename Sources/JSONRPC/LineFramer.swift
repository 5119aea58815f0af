/// Splits a byte stream into newline-terminated messages.
///
/// Lines that lie wholly inside one read are handed out without copying; only
/// a line split across reads is buffered. A line longer than the limit is never
/// buffered whole: the framer drops bytes until the next newline and reports it
/// once as `.oversized`, so a 10 MB line costs no more memory than a 1 MiB one.
/// `\r\n` endings are accepted, and blank (whitespace-only) lines are skipped.
public struct LineFramer {
    public enum Event {
        case line(UnsafeBufferPointer<UInt8>)
        case oversized
    }

    public let maxLineBytes: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Feeds one chunk read from the stream; `emit` is called for each complete line, in order.
    @inline(__always)
    public mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, _ emit: (Event) -> Void) {
        var start = 0
        let n = chunk.count
        while start < n {
            guard let nl = Self.indexOfNewline(chunk, from: start) else {
                // No newline in the rest of the chunk: keep it for the next read.
                if !discarding {
                    if pending.count + (n - start) > maxLineBytes {
                        discarding = true
                        pending.removeAll(keepingCapacity: false)
                    } else {
                        pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<n]))
                    }
                }
                return
            }
            if discarding {
                discarding = false
                emit(.oversized)
            } else if pending.isEmpty {
                deliver(UnsafeBufferPointer(rebasing: chunk[start..<nl]), emit)
            } else {
                if pending.count + (nl - start) > maxLineBytes {
                    emit(.oversized)
                } else {
                    pending.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[start..<nl]))
                    pending.withUnsafeBufferPointer { deliver($0, emit) }
                }
                pending.removeAll(keepingCapacity: true)
            }
            start = nl + 1
        }
    }

    /// End of stream: a final line without a newline still counts.
    public mutating func finish(_ emit: (Event) -> Void) {
        if discarding {
            emit(.oversized)
        } else if !pending.isEmpty {
            pending.withUnsafeBufferPointer { deliver($0, emit) }
        }
        pending.removeAll()
        discarding = false
    }

    private func deliver(_ line: UnsafeBufferPointer<UInt8>, _ emit: (Event) -> Void) {
        var end = line.count
        if end > maxLineBytes {
            emit(.oversized)
            return
        }
        while end > 0, line[end - 1] == 0x0D || line[end - 1] == 0x20 || line[end - 1] == 0x09 { end -= 1 }
        if end == 0 { return }  // blank line
        var allBlank = true
        for i in 0..<end where line[i] != 0x20 && line[i] != 0x09 && line[i] != 0x0D {
            allBlank = false
            break
        }
        if allBlank { return }
        emit(.line(UnsafeBufferPointer(rebasing: line[0..<end])))
    }

    @inline(__always)
    private static func indexOfNewline(_ chunk: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = chunk.baseAddress else { return nil }
        guard let p = memchr(base + start, 0x0A, chunk.count - start) else { return nil }
        return base.distance(to: p.assumingMemoryBound(to: UInt8.self))
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
