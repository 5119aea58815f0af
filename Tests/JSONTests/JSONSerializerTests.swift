import JSON
import XCTest

final class JSONSerializerTests: XCTestCase {
    func testCompactDeterministicOutput() {
        let v: JSONValue = ["jsonrpc": "2.0", "id": 1, "result": ["a": [true, false, .null], "b": 1.5, "url": "https://x/y"]]
        XCTAssertEqual(JSONSerializer.string(v), #"{"jsonrpc":"2.0","id":1,"result":{"a":[true,false,null],"b":1.5,"url":"https://x/y"}}"#)
    }

    func testEscapes() {
        XCTAssertEqual(JSONSerializer.string("a\"b\\c\n\r\t\u{8}\u{c}\u{1}\u{1f}é😀/"), #""a\"b\\c\n\r\t\b\f\u0001\u001fé😀/""#)
    }

    func testIntegers() {
        XCTAssertEqual(JSONSerializer.string(.int(0)), "0")
        XCTAssertEqual(JSONSerializer.string(.int(-7)), "-7")
        XCTAssertEqual(JSONSerializer.string(.int(Int64.min)), "-9223372036854775808")
        XCTAssertEqual(JSONSerializer.string(.int(Int64.max)), "9223372036854775807")
    }

    func testNonFiniteDoublesBecomeNull() {
        XCTAssertEqual(JSONSerializer.string(.double(.nan)), "null")
        XCTAssertEqual(JSONSerializer.string(.double(.infinity)), "null")
    }

    func testRoundTripOfRandomValues() throws {
        var rng = SystemRandomNumberGenerator()
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng) {
            case 0: return .null
            case 1: return .bool(Bool.random())
            case 2: return .int(Int64.random(in: Int64.min...Int64.max))
            case 3: return .double(Double.random(in: -1e300...1e300))
            case 4: return .string(String((0..<Int.random(in: 0..<12)).map { _ in Character(Unicode.Scalar(UInt8.random(in: 0...127))) }) + "é\u{10FFFF}")
            case 5: return .array((0..<Int.random(in: 0..<4)).map { _ in random(depth + 1) })
            default:
                var o = JSONObject()
                for i in 0..<Int.random(in: 0..<4) { o["k\(i)"] = random(depth + 1) }
                return .object(o)
            }
        }
        for _ in 0..<500 {
            let v = random(0)
            XCTAssertEqual(try JSONParser.parse(JSONSerializer.bytes(v)), v)
        }
    }

    func testObjectEqualityIgnoresOrder() {
        let a: JSONValue = ["x": 1, "y": 2]
        let b: JSONValue = ["y": 2, "x": 1]
        XCTAssertEqual(a, b)
        XCTAssertEqual(a.hashValue, b.hashValue)
        XCTAssertNotEqual(a, ["x": 1])
    }
}
