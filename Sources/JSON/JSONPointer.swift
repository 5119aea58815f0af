/// RFC 6901 JSON Pointers, used by configuration to say where a login
/// response keeps its token and user (`"/jwt"`, `"/data/user"`).
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    public let tokens: [String]
    public let description: String

    /// Parses `""` (the whole document) or `/a/b~1c/0`; `nil` when malformed.
    public init?(_ text: String) {
        if text.isEmpty { tokens = []; description = text; return }
        guard text.hasPrefix("/") else { return nil }
        var out: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var it = raw.makeIterator()
            while let c = it.next() {
                if c == "~" {
                    switch it.next() {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: return nil
                    }
                } else {
                    token.append(c)
                }
            }
            out.append(token)
        }
        tokens = out
        description = text
    }

    /// The value the pointer names inside `document`, or `nil`.
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let o):
                guard let next = o[token] else { return nil }
                current = next
            case .array(let a):
                guard let i = Int(token), i >= 0, i < a.count, token == String(i) else { return nil }
                current = a[i]
            default:
                return nil
            }
        }
        return current
    }
}
