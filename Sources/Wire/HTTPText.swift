/// The two text rules of HTTP/1.1 that every HTTP reader here applies — the dev
/// issuer's server, the agent's redirect listener and its curl transport — kept
/// to the protocol's ASCII definitions rather than Foundation's Unicode ones
/// (which would also pull Foundation, and ICU, into the agent at start-up).
public enum HTTPText {
    /// `text` without leading and trailing optional whitespace: spaces and tabs (RFC 9110 §5.6.3).
    public static func trimmingWhitespace<Text: StringProtocol>(_ text: Text) -> String {
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !isWhitespace($0) }) else { return "" }
        var end = first
        var index = first
        while index != bytes.endIndex {
            if !isWhitespace(bytes[index]) { end = bytes.index(after: index) }
            bytes.formIndex(after: &index)
        }
        return String(decoding: bytes[first..<end], as: UTF8.self)
    }

    /// Equal when compared ASCII case-insensitively, as HTTP compares field names and auth schemes.
    public static func equalIgnoringCase<A: StringProtocol, B: StringProtocol>(_ a: A, _ b: B) -> Bool {
        a.utf8.elementsEqual(b.utf8) { lowered($0) == lowered($1) }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    private static func lowered(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
}
