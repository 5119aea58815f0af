import JSON

/// Typed access to a request's named params, turning every mismatch into a
/// `-32602` whose message names the offending field, so a host developer sees
/// what to fix without reading the agent's source.
public struct RPCParams: Sendable {
    public let object: JSONObject

    public init(_ object: JSONObject) { self.object = object }

    public subscript(key: String) -> JSONValue? {
        let v = object[key]
        if case .null? = v { return nil }
        return v
    }

    public func string(_ key: String) throws(RPCError) -> String {
        guard let v = self[key] else { throw .invalidParams("missing required field '\(key)'") }
        guard case .string(let s) = v else { throw .invalidParams("'\(key)' must be a string, got \(v.kindName)") }
        return s
    }

    public func optionalString(_ key: String) throws(RPCError) -> String? {
        guard let v = self[key] else { return nil }
        guard case .string(let s) = v else { throw .invalidParams("'\(key)' must be a string, got \(v.kindName)") }
        return s
    }

    public func optionalBool(_ key: String) throws(RPCError) -> Bool? {
        guard let v = self[key] else { return nil }
        guard case .bool(let b) = v else { throw .invalidParams("'\(key)' must be a boolean, got \(v.kindName)") }
        return b
    }

    public func optionalObject(_ key: String) throws(RPCError) -> JSONObject? {
        guard let v = self[key] else { return nil }
        guard case .object(let o) = v else { throw .invalidParams("'\(key)' must be an object, got \(v.kindName)") }
        return o
    }

    public func object(_ key: String) throws(RPCError) -> JSONObject {
        guard let o = try optionalObject(key) else { throw .invalidParams("missing required field '\(key)'") }
        return o
    }

    public func optionalStringArray(_ key: String) throws(RPCError) -> [String]? {
        guard let v = self[key] else { return nil }
        guard case .array(let items) = v else { throw .invalidParams("'\(key)' must be an array of strings, got \(v.kindName)") }
        var out: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let s) = item else { throw .invalidParams("'\(key)[\(i)]' must be a string, got \(item.kindName)") }
            out.append(s)
        }
        return out
    }

    /// Rejects fields the method does not know, which catches typos such as `provder`.
    public func rejectUnknown(allowed: [String]) throws(RPCError) {
        for key in object.keys where !allowed.contains(key) {
            if allowed.isEmpty { throw .invalidParams("unknown field '\(key)'; this method takes no params") }
            throw .invalidParams("unknown field '\(key)'; expected one of: \(allowed.joined(separator: ", "))")
        }
    }
}
