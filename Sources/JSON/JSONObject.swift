/// A JSON object that keeps its members in insertion order.
///
/// Order is kept so that serialization is deterministic and reads the way the
/// code built it (`jsonrpc`, `id`, `result`). Equality ignores order, as JSON does.
/// Lookup is linear: protocol objects have a handful of members, where a scan
/// beats hashing; the parser guards large objects against duplicates separately.
public struct JSONObject: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public private(set) var keys: [String] = []
    public private(set) var values: [JSONValue] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        for (k, v) in elements { self[k] = v }
    }

    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    /// Reads a member; setting replaces in place or appends, setting `nil` removes.
    public subscript(key: String) -> JSONValue? {
        get {
            if let i = keys.firstIndex(of: key) { return values[i] }
            return nil
        }
        set {
            if let i = keys.firstIndex(of: key) {
                if let newValue { values[i] = newValue } else {
                    keys.remove(at: i)
                    values.remove(at: i)
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
            }
        }
    }

    /// Appends without looking for an existing key; the caller guarantees uniqueness
    /// (the parser has already rejected duplicates; a copy of an object has none).
    /// `package`, not `public`: outside this package the O(n) subscript is the only way in,
    /// so no client can build an object with a key twice.
    package mutating func appendUnchecked(_ key: String, _ value: JSONValue) {
        keys.append(key)
        values.append(value)
    }

    public var members: Zip2Sequence<[String], [JSONValue]> { zip(keys, values) }

    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.keys.count == b.keys.count else { return false }
        for (k, v) in a.members {
            guard let other = b[k], other == v else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine the members' hashes commutatively.
        var sum = 0
        for (k, v) in members {
            var h = Hasher()
            h.combine(k)
            h.combine(v)
            sum = sum &+ h.finalize()
        }
        hasher.combine(keys.count)
        hasher.combine(sum)
    }
}
