import JSON

/// `auth-agent mcp --ignore-tool PATTERN`: tools the host must neither see nor call — hidden from
/// `tools/list` answers and refused at `tools/call` — by name, `*` matching any run of characters
/// (`delete*`, `*account`), as mcp-remote's flag of the same name does.
public struct ToolFilter: Sendable, Equatable {
    public let patterns: [String]

    public init(_ patterns: [String]) { self.patterns = patterns }

    public var isEmpty: Bool { patterns.isEmpty }

    /// Whether the tool `name` is ignored.
    public func ignores(_ name: String) -> Bool { patterns.contains { Self.matches(Array(name.unicodeScalars), Array($0.unicodeScalars)) } }

    /// A `tools/list` result without the ignored tools; nil when it has none to remove (sent as it came).
    func filtered(_ answer: JSONValue) -> JSONValue? {
        guard case .object(var message) = answer, case .object(var result)? = message["result"],
              let tools = result["tools"]?.arrayValue else { return nil }
        let kept = tools.filter { tool in tool["name"]?.stringValue.map { !ignores($0) } ?? true }
        guard kept.count != tools.count else { return nil }
        result["tools"] = .array(kept)
        message["result"] = .object(result)
        return .object(message)
    }

    /// Glob matching with `*` only, iterative (no recursion on long names).
    static func matches(_ name: [Unicode.Scalar], _ pattern: [Unicode.Scalar]) -> Bool {
        var (n, p) = (0, 0)
        var star: Int?
        var resume = 0
        while n < name.count {
            if p < pattern.count, pattern[p] != "*", pattern[p] == name[n] {
                n += 1
                p += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = p
                resume = n
                p += 1
            } else if let s = star {
                p = s + 1
                resume += 1
                n = resume
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
