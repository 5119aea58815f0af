/// Why parsing failed and where (byte offset into the input).
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let message: String
    public var description: String { "\(message) at byte \(offset)" }
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// Strictness is a security property here: two parsers that disagree about one
/// message are an attack surface. So: no comments, no trailing commas, no NaN or
/// Infinity, no control characters in strings, no lone surrogates, no invalid
/// UTF-8, **duplicate keys are an error**, integers must fit in `Int64`, doubles
/// must be finite, nesting is capped (default 128) so hostile input cannot
/// exhaust the stack. Written by hand over raw bytes because this is the agent's
/// hot path: Foundation's coders are several times slower.
public struct JSONParser {
    public static let defaultMaxDepth = 128

    /// Parses exactly one JSON value, surrounded by optional whitespace.
    public static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var p = JSONParser(bytes: bytes, maxDepth: maxDepth)
        p.skipWhitespace()
        let value = try p.parseValue(depth: 0)
        p.skipWhitespace()
        if p.index != bytes.count { throw p.error("unexpected data after the JSON value") }
        return value
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        do {
            return try bytes.withUnsafeBufferPointer { try parse($0, maxDepth: maxDepth) }
        } catch let e as JSONParseError {
            throw e
        } catch {
            fatalError("unreachable")
        }
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private let maxDepth: Int
    private var index = 0

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func error(_ message: String) -> JSONParseError { JSONParseError(offset: index, message: message) }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(JSONParseError) {
        let n = word.utf8CodeUnitCount
        guard bytes.count - index >= n else { throw error("invalid literal") }
        let w = word.utf8Start
        for i in 0..<n where bytes[index + i] != w[i] { throw error("invalid literal") }
        index += n
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(items) }
        while true {
            skipWhitespace()
            items.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated array") }
            let c = bytes[index]
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "]") { return .array(items) }
            index -= 1
            throw error("expected ',' or ']' in array")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if depth > maxDepth { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        var object = JSONObject()
        var seen: Set<String>? = nil  // only built once an object grows past a linear scan's sweet spot
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string key") }
            let keyOffset = index
            let key = try parseString()
            if seen != nil {
                if !seen!.insert(key).inserted { throw JSONParseError(offset: keyOffset, message: "duplicate key") }
            } else if object.keys.contains(key) {
                throw JSONParseError(offset: keyOffset, message: "duplicate key")
            } else if object.count >= 16 {
                seen = Set(object.keys)
                seen!.insert(key)
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':' after key") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            object.appendUnchecked(key, value)
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated object") }
            let c = bytes[index]
            index += 1
            if c == UInt8(ascii: ",") { continue }
            if c == UInt8(ascii: "}") { return .object(object) }
            index -= 1
            throw error("expected ',' or '}' in object")
        }
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        index += 1  // opening quote
        let start = index
        var ascii = true
        // Fast path: no escapes.
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if !ascii && !UTF8Validation.isValid(slice) {
                    throw JSONParseError(offset: start, message: "invalid UTF-8 in string")
                }
                return String(decoding: slice, as: UTF8.self)
            }
            if c == UInt8(ascii: "\\") { break }
            if c < 0x20 { throw error("control character in string") }
            if c >= 0x80 { ascii = false }
            index += 1
        }
        guard index < bytes.count else { throw error("unterminated string") }
        // Slow path: copy into a buffer, decoding escapes.
        var buffer = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "\"") {
                index += 1
                guard buffer.withUnsafeBufferPointer(UTF8Validation.isValid) else {
                    throw JSONParseError(offset: start, message: "invalid UTF-8 in string")
                }
                return String(decoding: buffer, as: UTF8.self)
            }
            if c < 0x20 { throw error("control character in string") }
            if c != UInt8(ascii: "\\") {
                buffer.append(c)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""): buffer.append(0x22)
            case UInt8(ascii: "\\"): buffer.append(0x5C)
            case UInt8(ascii: "/"): buffer.append(0x2F)
            case UInt8(ascii: "b"): buffer.append(0x08)
            case UInt8(ascii: "f"): buffer.append(0x0C)
            case UInt8(ascii: "n"): buffer.append(0x0A)
            case UInt8(ascii: "r"): buffer.append(0x0D)
            case UInt8(ascii: "t"): buffer.append(0x09)
            case UInt8(ascii: "u"):
                let unit = try parseHex4()
                var scalar: UInt32
                if (0xD800...0xDBFF).contains(unit) {
                    guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw error("lone high surrogate in \\u escape")
                    }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw error("high surrogate not followed by a low surrogate") }
                    scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    throw error("lone low surrogate in \\u escape")
                } else {
                    scalar = UInt32(unit)
                }
                appendUTF8(scalar, to: &buffer)
            default:
                index -= 1
                throw error("invalid escape in string")
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw error("truncated \\u escape") }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let c = bytes[index]
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            v = v << 4 | UInt16(d)
            index += 1
        }
        return v
    }

    private func appendUTF8(_ scalar: UInt32, to buffer: inout [UInt8]) {
        switch scalar {
        case 0..<0x80:
            buffer.append(UInt8(scalar))
        case 0x80..<0x800:
            buffer.append(UInt8(0xC0 | (scalar >> 6)))
            buffer.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            buffer.append(UInt8(0xE0 | (scalar >> 12)))
            buffer.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            buffer.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            buffer.append(UInt8(0xF0 | (scalar >> 18)))
            buffer.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            buffer.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            buffer.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
        // Integer part, accumulated as a negative value so Int64.min fits.
        var acc: Int64 = 0
        var overflow = false
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) {
                let d = Int64(bytes[index] - UInt8(ascii: "0"))
                let (m, o1) = acc.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(d)
                if o1 || o2 { overflow = true } else { acc = s }
                index += 1
            }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected digits after '.'") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("expected digits in exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if isInteger {
            if !negative {
                if overflow || acc == Int64.min { throw JSONParseError(offset: start, message: "integer does not fit in 64 bits") }
                return .int(-acc)
            }
            if overflow { throw JSONParseError(offset: start, message: "integer does not fit in 64 bits") }
            return .int(acc)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { throw JSONParseError(offset: start, message: "number out of range") }
        return .double(d)
    }

    @inline(__always) private func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
}
