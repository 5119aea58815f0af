/// Compact, deterministic JSON output.
///
/// Objects keep insertion order, nothing is pretty-printed, `/` is not escaped,
/// non-ASCII text is written as UTF-8, control characters as escapes. Output is
/// appended to a caller's byte buffer so a response can be built in place.
public enum JSONSerializer {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(value, to: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &out)
        case .bool(let b): append(b ? "true" : "false", to: &out)
        case .int(let i): writeInt(i, to: &out)
        case .double(let d): writeDouble(d, to: &out)
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            var first = true
            for item in items {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            var first = true
            for (k, v) in object.members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                writeString(k, to: &out)
                out.append(UInt8(ascii: ":"))
                write(v, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    @inline(__always) static func append(_ s: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: s.utf8Start, count: s.utf8CodeUnitCount))
    }

    public static func writeInt(_ value: Int64, to out: inout [UInt8]) {
        if value == 0 { out.append(UInt8(ascii: "0")); return }
        var magnitude = value.magnitude
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        withUnsafeMutableBytes(of: &digits) { buf in
            while magnitude > 0 {
                buf[n] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                n += 1
            }
            while n > 0 {
                n -= 1
                out.append(buf[n])
            }
        }
    }

    static func writeDouble(_ value: Double, to out: inout [UInt8]) {
        guard value.isFinite else { append("null", to: &out); return }
        // Swift's description is the shortest text that round-trips, and valid JSON
        // ("1.0", "1e-05", "1e+20").
        out.append(contentsOf: value.description.utf8)
    }

    public static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { buf in
            var runStart = 0
            for i in 0..<buf.count {
                let c = buf[i]
                guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[runStart..<i])) }
                runStart = i + 1
                out.append(UInt8(ascii: "\\"))
                switch c {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                default:
                    let hex: [UInt8] = Array("0123456789abcdef".utf8)
                    out.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(c >> 4)], hex[Int(c & 0xF)]])
                }
            }
            if runStart < buf.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: buf[runStart..<buf.count])) }
        }
        out.append(UInt8(ascii: "\""))
    }
}
