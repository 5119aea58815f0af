/// A JSON object read straight from a line's bytes, without building a
/// `JSONValue` tree: what a method's shortcut (`RPCShortcut`) is handed.
///
/// Only a strict subset of JSON is read: objects at most `maxDepth` deep with at
/// most `maxMembers` members and no key twice; strings of printable ASCII with
/// no escapes; integers of at most 18 digits without fraction or exponent.
/// Every text of the subset is JSON that `JSONParser` accepts and reads as the
/// same values — a string is its own bytes, an integer fits in `Int64` — so a
/// shortcut can never see a request differently from the general path. Anything
/// outside the subset (escapes, non-ASCII text, arrays, `true`, `null`,
/// fractions, a trailing comma, a truncated line) is not an error here but
/// "not sure": the general path, with its exact error messages, takes the line.
public struct PlainObject {
    public static let maxDepth = 4
    public static let maxMembers = 8

    /// The object's text; at the top level, the whole line (whitespace around the object allowed).
    let text: UnsafeBufferPointer<UInt8>
    /// How many levels of objects this one and those inside it may span.
    let depth: Int

    /// The line as a plain object, not yet read: `forEachMember` reads (and checks) it.
    init(line: UnsafeBufferPointer<UInt8>) {
        self.init(text: line, depth: Self.maxDepth)
    }

    init(text: UnsafeBufferPointer<UInt8>, depth: Int) {
        self.text = text
        self.depth = depth
    }

    /// Whether the object has no members (and is plain).
    public var isEmpty: Bool { forEachMember { _, _ in false } }

    /// Reads the object, calling `body` with each member in order. True when the
    /// whole text is a plain object and `body` never answered false; false as
    /// soon as either fails, possibly after some members were visited. A nested
    /// object is checked whole before it is handed to `body`.
    public func forEachMember(_ body: (PlainString, PlainValue) -> Bool) -> Bool {
        var scanner = PlainScanner(text)
        scanner.skipWhitespace()
        guard scanner.object(depth: depth, body) else { return false }
        scanner.skipWhitespace()
        return scanner.atEnd
    }
}

/// A member's value in a `PlainObject`.
public enum PlainValue {
    case string(PlainString)
    case int(Int64)
    case object(PlainObject)
}

/// A string of a `PlainObject`: printable ASCII without escapes, so its bytes
/// are its value. Valid only while the line it was read from is.
public struct PlainString: Equatable {
    public let bytes: UnsafeBufferPointer<UInt8>

    /// Whether the string is `text` (ASCII).
    public func `is`(_ text: StaticString) -> Bool {
        guard text.utf8CodeUnitCount == bytes.count else { return false }
        let other = text.utf8Start
        for i in 0..<bytes.count where bytes[i] != other[i] { return false }
        return true
    }

    public static func == (a: PlainString, b: PlainString) -> Bool {
        a.bytes.count == b.bytes.count && a.bytes.elementsEqual(b.bytes)
    }

    /// The string as a Swift `String` (a copy).
    public var string: String { String(decoding: bytes, as: UTF8.self) }
}

/// Reads the subset over raw bytes; every function either consumes what it
/// recognises and answers it, or answers nil/false (the caller then gives up on
/// the whole line, so the position after a failure does not matter).
struct PlainScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    /// JSON's whitespace, as `JSONParser` skips it.
    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// `{ "key": value, … }`, at most `depth` levels deep counting this one.
    mutating func object(depth: Int, _ member: (PlainString, PlainValue) -> Bool) -> Bool {
        guard depth > 0, index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        return withUnsafeTemporaryAllocation(of: PlainString.self, capacity: PlainObject.maxMembers) { keys -> Bool in
            var count = 0
            while true {
                skipWhitespace()
                guard count < PlainObject.maxMembers, let key = string() else { return false }
                for k in 0..<count where keys[k] == key { return false }  // JSONParser rejects duplicate keys
                (keys.baseAddress! + count).initialize(to: key)
                count += 1
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                skipWhitespace()
                guard let value = value(depth: depth) else { return false }
                if !member(key, value) { return false }
                skipWhitespace()
                guard index < bytes.count else { return false }
                let c = bytes[index]
                index += 1
                if c == UInt8(ascii: ",") { continue }
                return c == UInt8(ascii: "}")
            }
        }
    }

    /// A member's value inside an object that may span `depth` levels.
    private mutating func value(depth: Int) -> PlainValue? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return string().map(PlainValue.string)
        case UInt8(ascii: "{"):
            let start = index
            guard object(depth: depth - 1, { _, _ in true }) else { return nil }
            return .object(PlainObject(text: UnsafeBufferPointer(rebasing: bytes[start..<index]), depth: depth - 1))
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return integer().map(PlainValue.int)
        default:
            return nil
        }
    }

    /// `"…"` of bytes 0x20–0x7E other than `"` and `\`.
    private mutating func string() -> PlainString? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var i = start
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                index = i + 1
                return PlainString(bytes: UnsafeBufferPointer(rebasing: bytes[start..<i]))
            }
            guard c >= 0x20, c < 0x7F, c != UInt8(ascii: "\\") else { return nil }
            i += 1
        }
        return nil
    }

    /// `-?(0|[1-9][0-9]*)` of at most 18 digits (so it fits in `Int64`), not
    /// followed by a fraction or exponent (which would make it a double).
    private mutating func integer() -> Int64? {
        var i = index
        let negative = bytes[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let start = i
        var magnitude: Int64 = 0
        while i < bytes.count, bytes[i] &- UInt8(ascii: "0") < 10 {
            guard i - start < 18 else { return nil }
            magnitude = magnitude * 10 + Int64(bytes[i] - UInt8(ascii: "0"))
            i += 1
        }
        guard i > start, bytes[start] != UInt8(ascii: "0") || i - start == 1 else { return nil }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") || bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") { return nil }
        index = i
        return negative ? -magnitude : magnitude
    }
}
