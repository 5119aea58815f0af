import JSON
import XCTest

final class JSONParserTests: XCTestCase {
    private func parse(_ s: String) throws -> JSONValue { try JSONParser.parse(s) }

    private func assertRejects(_ s: String, _ fragment: String, file: StaticString = #filePath, line: UInt = #line) {
        do {
            let v = try JSONParser.parse(s)
            XCTFail("accepted \(s.prefix(40)) as \(v)", file: file, line: line)
        } catch {
            XCTAssertTrue(fragment.isEmpty || error.message.contains(fragment), "\(error.message) lacks \(fragment)", file: file, line: line)
        }
    }

    func testScalars() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse(" true "), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("0"), .int(0))
        XCTAssertEqual(try parse("-0"), .int(0))
        XCTAssertEqual(try parse("42"), .int(42))
        XCTAssertEqual(try parse("-9223372036854775808"), .int(Int64.min))
        XCTAssertEqual(try parse("9223372036854775807"), .int(Int64.max))
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("-2.5e3"), .double(-2500))
        XCTAssertEqual(try parse("1E-2"), .double(0.01))
        XCTAssertEqual(try parse("1e2"), .double(100))
        XCTAssertEqual(try parse("\"\""), .string(""))
    }

    func testIntegersBeyond64BitsAreRejected() {
        assertRejects("9223372036854775808", "64 bits")
        assertRejects("-9223372036854775809", "64 bits")
        assertRejects("1234567890123456789012345678901234567890", "64 bits")
    }

    func testNumberGrammar() {
        for bad in ["01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "-Infinity", "1.e3"] {
            assertRejects(bad, "")
        }
        assertRejects("1e999999", "out of range")
        assertRejects("-1e400", "out of range")
    }

    func testDoublesRoundTrip() throws {
        for d in [0.1, 1.0 / 3.0, Double.leastNonzeroMagnitude, 1.7976931348623157e308, -2.2250738585072014e-308, 123456.789, 1e21, 1e-7] {
            let text = JSONSerializer.string(.double(d))
            XCTAssertEqual(try parse(text), .double(d), text)
        }
    }

    func testStringsAndEscapes() throws {
        XCTAssertEqual(try parse(#""a\"b\\c\/d\b\f\n\r\t""#), .string("a\"b\\c/d\u{8}\u{c}\n\r\t"))
        XCTAssertEqual(try parse(#""\u00e9\u4e2d""#), .string("é中"))
        XCTAssertEqual(try parse(#""\ud83d\ude00""#), .string("😀"))
        XCTAssertEqual(try parse("\"héllo 😀\""), .string("héllo 😀"))
        XCTAssertEqual(try parse(#""x\u0000y""#), .string("x\u{0}y"))
    }

    func testBadStrings() {
        assertRejects(#""\ud800""#, "lone high surrogate")
        assertRejects(#""\ud800\u0041""#, "not followed by a low surrogate")
        assertRejects(#""\udc00""#, "lone low surrogate")
        assertRejects(#""\x""#, "invalid escape")
        assertRejects(#""\u12G4""#, "hex digit")
        assertRejects("\"a\tb\"", "control character")
        assertRejects("\"abc", "unterminated")
        assertRejects("'abc'", "unexpected character")
    }

    func testInvalidUTF8() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22]] {
            XCTAssertThrowsError(try JSONParser.parse(bytes), "\(bytes)")
        }
        XCTAssertThrowsError(try JSONParser.parse([0xFF]))
    }

    func testStructures() throws {
        let v = try parse(#" { "a" : [1, {"b": null}, "c"], "d": {} , "e": [] } "#)
        XCTAssertEqual(v["a"], [1, ["b": .null], "c"])
        XCTAssertEqual(v["d"], .object([:]))
        XCTAssertEqual(v["e"], .array([]))
        XCTAssertEqual(v.objectValue?.keys, ["a", "d", "e"])
    }

    func testStrictness() {
        assertRejects("[1,]", "unexpected character")
        assertRejects(#"{"a":1,}"#, "expected a string key")
        assertRejects("[1 2]", "expected ','")
        assertRejects("{\"a\" 1}", "expected ':'")
        assertRejects("// c\n1", "unexpected character")
        assertRejects("1 /* c */", "unexpected data")
        assertRejects("", "end of input")
        assertRejects("tru", "invalid literal")
        assertRejects("nul", "invalid literal")
        assertRejects("[1]]", "unexpected data")
    }

    func testDuplicateKeysAreRejected() {
        assertRejects(#"{"a":1,"a":2}"#, "duplicate key")
        // Past the linear-scan threshold too.
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        assertRejects("{\(many),\"k3\":0}", "duplicate key")
        XCTAssertNoThrow(try JSONParser.parse("{\(many)}"))
    }

    func testNestingLimit() throws {
        let ok = String(repeating: "[", count: 128) + String(repeating: "]", count: 128)
        XCTAssertNoThrow(try JSONParser.parse(ok))
        assertRejects(String(repeating: "[", count: 129) + String(repeating: "]", count: 129), "nesting deeper than 128")
        assertRejects(String(repeating: "[", count: 100_000), "nesting deeper")
        assertRejects(String(repeating: "{\"a\":", count: 100_000), "nesting deeper")
    }

    func testPointer() throws {
        let doc = try parse(#"{"a":{"b/c":[10,{"~d":"x"}]},"":1}"#)
        XCTAssertEqual(JSONPointer("/a/b~1c/1/~0d")?.resolve(in: doc), "x")
        XCTAssertEqual(JSONPointer("/a/b~1c/0")?.resolve(in: doc), 10)
        XCTAssertEqual(JSONPointer("/")?.resolve(in: doc), 1)
        XCTAssertEqual(JSONPointer("")?.resolve(in: doc), doc)
        XCTAssertNil(JSONPointer("/a/b~1c/01")?.resolve(in: doc))
        XCTAssertNil(JSONPointer("/missing")?.resolve(in: doc))
        XCTAssertNil(JSONPointer("a"))
        XCTAssertNil(JSONPointer("/~2"))
    }
}

final class UTF8ValidationTests: XCTestCase {
    func testAgreesWithTheStandardLibraryOnRandomBytes() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var bytes: [UInt8] = [0x22]
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                bytes.append([UInt8.random(in: 0x20...0xFF, using: &rng), UInt8.random(in: 0x80...0xBF, using: &rng), 0xE0, 0xED, 0xF0, 0xF4][Int.random(in: 0..<6, using: &rng)])
            }
            bytes.append(0x22)
            let inner = Array(bytes[1..<(bytes.count - 1)])
            if inner.contains(0x22) || inner.contains(0x5C) { continue }
            let reference = String(decoding: inner, as: UTF8.self).utf8.elementsEqual(inner)
            let parsed = (try? JSONParser.parse(bytes)) != nil
            XCTAssertEqual(parsed, reference, "\(inner)")
        }
    }
}
