/// Base64 in the URL-safe alphabet of RFC 4648 §5, as JWTs and PKCE use it, plus
/// the standard alphabet with padding that HTTP Basic authentication needs.
///
/// Written by hand because Foundation's `Data(base64Encoded:)` knows only the
/// standard alphabet and insists on padding.
public enum Base64URL {
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// URL-safe alphabet, no padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlAlphabet, pad: false)
    }

    /// Standard alphabet (`+`, `/`) with `=` padding, for `Authorization: Basic`.
    public static func standardEncode(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standardAlphabet, pad: true)
    }

    /// Decodes the URL-safe alphabet with or without `=` padding; `nil` on any
    /// other character, misplaced padding or an impossible length.
    public static func decode(_ text: String) -> [UInt8]? {
        var symbols = Array(text.utf8)
        if symbols.last == UInt8(ascii: "=") {
            guard symbols.count % 4 == 0 else { return nil }
            symbols.removeLast()
            if symbols.last == UInt8(ascii: "=") { symbols.removeLast() }
        }
        guard symbols.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for symbol in symbols {
            guard let value = urlValue(symbol) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        return out
    }

    private static func urlValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): return 62
        case UInt8(ascii: "_"): return 63
        default: return nil
        }
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let remaining = bytes.count - i
        if remaining == 1 {
            let n = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if pad { out.append(contentsOf: [UInt8(ascii: "="), UInt8(ascii: "=")]) }
        } else if remaining == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            if pad { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
