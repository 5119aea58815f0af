/// A JSON value as RFC 8259 defines it.
///
/// Integers and doubles are distinct cases so that ids and counters survive a
/// round trip exactly: an integer literal that fits in `Int64` parses as `.int`,
/// anything with a fraction or exponent as `.double`. Integers outside `Int64`
/// are rejected by the parser rather than silently rounded.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }

    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }

    /// The value as an integer: `.int`, or a `.double` with no fractional part that fits.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.isFinite, abs(d) < 9.2e18, Double(Int64(d)) == d else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The value as a double: `.double`, or an `.int` widened.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }

    /// Member lookup on objects; `nil` for other kinds or absent keys.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// A short name of the value's kind, for error messages ("expected a string, got an array").
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Literal conformances for building messages in code. Deliberately not
/// `ExpressibleByNilLiteral`: `nil` must stay "absent", never silently become JSON `null`.
extension JSONValue: ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        var o = JSONObject()
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact serialization; handy in logs of non-secret values and in test failures.
    public var description: String { JSONSerializer.string(self) }
}
