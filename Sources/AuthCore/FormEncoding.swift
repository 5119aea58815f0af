/// `application/x-www-form-urlencoded` as OAuth token endpoints expect it
/// (RFC 6749 Appendix B), and the client authentication header built on it.
///
/// Only the unreserved characters `A-Z a-z 0-9 - . _ ~` pass through; a space
/// becomes `+`; every other UTF-8 byte becomes `%XX` in uppercase hex. Encoding
/// everything else keeps `&`, `=` and `+` inside a password from changing the
/// form's structure.
public enum FormEncoding {
    /// `name=value&name=value`, in the order given.
    public static func encode(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(name, to: &out)
            out.append(UInt8(ascii: "="))
            append(value, to: &out)
        }
        return out
    }

    /// One name or value, encoded.
    public static func component(_ text: String) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1): the
    /// form encoding first, so a `:` in the client id cannot split it.
    public static func basicAuthorization(clientId: String, clientSecret: String) -> String {
        "Basic " + Base64URL.standardEncode(Array((component(clientId) + ":" + component(clientSecret)).utf8))
    }

    /// Decodes one name or value (`+` is a space, `%XX` a byte); nil when a
    /// `%` escape is malformed or the bytes are not UTF-8.
    public static func decodeComponent(_ text: String) -> String? {
        var out: [UInt8] = []
        var bytes = text.utf8.makeIterator()
        while let byte = bytes.next() {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = bytes.next().flatMap(hexValue), let low = bytes.next().flatMap(hexValue) else { return nil }
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        let decoded = String(decoding: out, as: UTF8.self)
        return Array(decoded.utf8) == out ? decoded : nil
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func append(_ text: String, to out: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: " "):
                out.append(UInt8(ascii: "+"))
            default:
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
    }
}
