/// `application/x-www-form-urlencoded` as OAuth uses it (RFC 6749 Appendix B):
/// token requests and the client authentication header built on it on the
/// agent's side; request bodies, queries and redirect parameters on the dev issuer's.
///
/// Only the unreserved characters `A-Z a-z 0-9 - . _ ~` pass through; a space
/// becomes `+`; every other UTF-8 byte becomes `%XX` in uppercase hex. Encoding
/// everything else keeps `&`, `=` and `+` inside a password from changing the
/// form's structure.
public enum FormEncoding {
    /// `name=value&name=value`, in the order given.
    public static func encode(_ pairs: [(String, String)]) -> [UInt8] {
        join(pairs, spaceAsPlus: true)
    }

    /// The same as text for a URL's query, but a space as `%20`: a query is read
    /// by URI parsers too (`URLComponents.queryItems`, say), which leave `+` alone.
    public static func queryString(_ pairs: [(String, String)]) -> String {
        String(decoding: join(pairs, spaceAsPlus: false), as: UTF8.self)
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

    /// Name/value pairs in order (`name` alone has an empty value); `nil` when a
    /// percent escape or the UTF-8 is invalid anywhere.
    public static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        for part in bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = part.firstIndex(of: UInt8(ascii: "=")) ?? part.endIndex
            let value = equals == part.endIndex ? part[equals...] : part[part.index(after: equals)...]
            guard let n = decodeComponent(part[..<equals]), let v = decodeComponent(value) else { return nil }
            pairs.append((n, v))
        }
        return pairs
    }

    /// The pairs as a dictionary; `nil` when decoding fails or a name repeats
    /// (RFC 6749 §3.1: request parameters MUST NOT be included more than once).
    public static func uniqueParameters<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> [String: String]? {
        guard let pairs = decode(bytes) else { return nil }
        var parameters: [String: String] = [:]
        for (name, value) in pairs {
            guard parameters.updateValue(value, forKey: name) == nil else { return nil }
        }
        return parameters
    }

    /// Decodes one name or value (`+` is a space, `%XX` a byte); nil when a
    /// `%` escape is malformed or the bytes are not UTF-8.
    public static func decodeComponent<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): out.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                out.append(high << 4 | low)
            default: out.append(byte)
            }
        }
        let decoded = String(decoding: out, as: UTF8.self)
        return Array(decoded.utf8) == out ? decoded : nil
    }

    public static func decodeComponent(_ text: String) -> String? {
        decodeComponent(text.utf8)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func join(_ pairs: [(String, String)], spaceAsPlus: Bool) -> [UInt8] {
        var out: [UInt8] = []
        for (index, (name, value)) in pairs.enumerated() {
            if index > 0 { out.append(UInt8(ascii: "&")) }
            append(name, to: &out, spaceAsPlus: spaceAsPlus)
            out.append(UInt8(ascii: "="))
            append(value, to: &out, spaceAsPlus: spaceAsPlus)
        }
        return out
    }

    private static let hex = Array("0123456789ABCDEF".utf8)

    private static func append(_ text: String, to out: inout [UInt8], spaceAsPlus: Bool = true) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: " ") where spaceAsPlus:
                out.append(UInt8(ascii: "+"))
            default:
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
    }
}
