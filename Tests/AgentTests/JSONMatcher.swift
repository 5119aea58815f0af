import JSON

/// Compares a message from the agent with the expected one from a transcript.
///
/// Key order is free; numbers compare by value; string patterns in the
/// expected side match volatile values: `"<any>"`, `"<string>"`, `"<number>"`,
/// `"<object>"`, `"<array>"`, `"<time>"` (RFC 3339), and `"<$name>"`, which
/// captures on first use and must be equal on every later use (and is
/// substituted into later `-->` lines). A top-level array (a batch answer)
/// compares as an unordered collection.
struct JSONMatcher {
    var captures: [String: JSONValue] = [:]

    /// nil when they match; otherwise a path and a reason.
    mutating func mismatch(expected: JSONValue, actual: JSONValue) -> String? {
        if case .array(let e) = expected, case .array(let a) = actual {
            return unorderedMismatch(e, a)
        }
        return mismatch(expected, actual, path: "$")
    }

    private mutating func unorderedMismatch(_ expected: [JSONValue], _ actual: [JSONValue]) -> String? {
        guard expected.count == actual.count else {
            return "$: batch of \(actual.count) answers, expected \(expected.count)"
        }
        var remaining = actual
        for (i, e) in expected.enumerated() {
            let saved = captures
            var found = false
            for (j, a) in remaining.enumerated() {
                if mismatch(e, a, path: "$[\(i)]") == nil {
                    remaining.remove(at: j)
                    found = true
                    break
                }
                captures = saved
            }
            if !found { return "$[\(i)]: no answer in the batch matches \(e)" }
        }
        return nil
    }

    private mutating func mismatch(_ e: JSONValue, _ a: JSONValue, path: String) -> String? {
        if case .string(let pattern) = e, pattern.hasPrefix("<"), pattern.hasSuffix(">") {
            return matchPattern(String(pattern.dropFirst().dropLast()), a, path: path)
        }
        switch (e, a) {
        case (.object(let eo), .object(let ao)):
            for key in eo.keys where ao[key] == nil { return "\(path): missing member \"\(key)\"" }
            for key in ao.keys where eo[key] == nil { return "\(path): unexpected member \"\(key)\"" }
            for (k, ev) in eo.members {
                if let m = mismatch(ev, ao[k]!, path: "\(path).\(k)") { return m }
            }
            return nil
        case (.array(let ea), .array(let aa)):
            guard ea.count == aa.count else { return "\(path): \(aa.count) items, expected \(ea.count)" }
            for i in 0..<ea.count {
                if let m = mismatch(ea[i], aa[i], path: "\(path)[\(i)]") { return m }
            }
            return nil
        default:
            if let ed = e.doubleValue, let ad = a.doubleValue { return ed == ad ? nil : "\(path): \(a), expected \(e)" }
            return e == a ? nil : "\(path): \(a), expected \(e)"
        }
    }

    private mutating func matchPattern(_ p: String, _ a: JSONValue, path: String) -> String? {
        switch p {
        case "any": return nil
        case "string": return a.stringValue != nil ? nil : "\(path): \(a.kindName), expected a string"
        case "number": return a.doubleValue != nil ? nil : "\(path): \(a.kindName), expected a number"
        case "object": return a.objectValue != nil ? nil : "\(path): \(a.kindName), expected an object"
        case "array": return a.arrayValue != nil ? nil : "\(path): \(a.kindName), expected an array"
        case "time":
            guard let s = a.stringValue, Self.isRFC3339UTC(s) else { return "\(path): \(a), expected an RFC 3339 UTC time" }
            return nil
        default:
            guard p.hasPrefix("$") else { return "\(path): unknown pattern <\(p)> in transcript" }
            let name = String(p.dropFirst())
            if let bound = captures[name] {
                return bound == a ? nil : "\(path): \(a), expected the value captured as <$\(name)>: \(bound)"
            }
            captures[name] = a
            return nil
        }
    }

    /// `2026-11-22T06:02:01Z`: whole seconds, UTC.
    static func isRFC3339UTC(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count == 20 else { return false }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        for i in digits where !(b[i] >= 48 && b[i] <= 57) { return false }
        return b[4] == 45 && b[7] == 45 && b[10] == 84 && b[13] == 58 && b[16] == 58 && b[19] == 90
    }

    /// Replaces `"<$name>"` in a line to send with the captured value's JSON.
    func substitute(_ line: String) -> String {
        var out = line
        for (name, value) in captures {
            out = out.replacingOccurrences(of: "\"<$\(name)>\"", with: JSONSerializer.string(value))
        }
        return out
    }
}
