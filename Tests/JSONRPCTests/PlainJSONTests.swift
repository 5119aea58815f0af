import JSON
@testable import JSONRPC
import XCTest

/// The shortcut's scanner must never accept a line the general parser rejects,
/// nor read one differently: every accepted line is checked against `JSONParser`.
final class PlainJSONTests: XCTestCase {
    /// What the scanner read, as a `JSONValue`; nil when it refused the line.
    static func read(_ line: [UInt8]) -> JSONValue? {
        line.withUnsafeBufferPointer { read(PlainObject(line: $0)) }
    }

    static func read(_ object: PlainObject) -> JSONValue? {
        var members = JSONObject()
        let ok = object.forEachMember { key, value in
            switch value {
            case .string(let s): members[key.string] = .string(s.string)
            case .int(let n): members[key.string] = .int(n)
            case .object(let o):
                guard let nested = read(o) else { return false }
                members[key.string] = nested
            }
            return true
        }
        return ok ? .object(members) : nil
    }

    static func request(_ line: String) -> (id: JSONValue, method: String, params: JSONValue?)? {
        Array(line.utf8).withUnsafeBufferPointer { bytes in
            PlainRequest(line: bytes, find: { $0.is("unwanted") ? nil : () }).map { ($0.id, $0.method.string, $0.params.flatMap(read)) }
        }
    }

    /// Read, and read exactly as `JSONParser` reads it.
    func assertAccepted(_ line: String, file: StaticString = #filePath, line number: UInt = #line) {
        let bytes = Array(line.utf8)
        guard let plain = Self.read(bytes) else { return XCTFail("refused: \(line)", file: file, line: number) }
        XCTAssertEqual(plain, try? JSONParser.parse(bytes), line, file: file, line: number)
    }

    func testAcceptsPlainObjectsInAnyOrderAndSpacing() {
        for line in [
            #"{"jsonrpc":"2.0","id":1,"method":"sign","params":{"request":{"method":"GET","url":"https://api.example.com/v1/items?page=2"}}}"#,
            #"{"params":{"provider":"p","request":{"url":"https://a.example.com/x y","method":"GET"}},"method":"sign","id":"abc","jsonrpc":"2.0"}"#,
            // Queries and fragments are read as they are, whatever they hold (issue 21: the fast path keeps them).
            #"{"jsonrpc":"2.0","id":2,"method":"sign","params":{"request":{"method":"GET","url":"https://api.example.com?page=2#top"}}}"#,
            #"{"jsonrpc":"2.0","id":3,"method":"sign","params":{"request":{"method":"GET","url":"https://a.example.com/p?a=b&c=%20d;e#f?g"}}}"#,
            #"{"jsonrpc":"2.0","id":4,"method":"sign","params":{"request":{"method":"GET","url":"https://a.example.com/?next=https://b.example.com/@x:1"}}}"#,
            " \t{ \"a\" : 1 ,\r\n \"b\" :{ } , \"c\":\"\" }\t \r",
            #"{}"#, #"{"n":-0}"#, #"{"n":0}"#, #"{"n":-123456789012345678}"#, #"{"n":999999999999999999}"#,
            #"{"s":"!#$%&'()*+,-./:;<=>?@[]^_`{|}~"}"#, #"{"s":"{}[],:"}"#,
            #"{"a":{"b":{"c":{}}}}"#,
            #"{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8}"#,
            #"{"a":{"k":1},"b":{"k":1}}"#,
        ] {
            assertAccepted(line)
        }
    }

    func testRefusesWhatItIsNotSureAbout() {
        for line in [
            // Escapes, even harmless ones; non-ASCII; control characters and DEL inside strings.
            #"{"s":"\u0041"}"#, #"{"s":"a\"b"}"#, #"{"s":"a\\b"}"#, #"{"s":"a\/b"}"#, #"{"\u0069d":1}"#,
            "{\"s\":\"é\"}", "{\"s\":\"\u{1F600}\"}", "{\"s\":\"a\tb\"}", "{\"s\":\"a\u{7F}b\"}", "{\"s\":\"\u{0}\"}",
            // Duplicate keys, at the top and nested.
            #"{"a":1,"a":1}"#, #"{"a":1,"b":2,"a":"x"}"#, #"{"p":{"url":"x","url":"y"}}"#,
            // Values outside the subset.
            #"{"a":[]}"#, #"{"a":true}"#, #"{"a":false}"#, #"{"a":null}"#, #"{"a":1.0}"#, #"{"a":1e3}"#, #"{"a":1E3}"#,
            #"{"a":01}"#, #"{"a":-}"#, #"{"a":--1}"#, #"{"a":+1}"#, #"{"a":1234567890123456789}"#, #"{"a":9223372036854775808}"#,
            #"{"a":-9223372036854775809}"#, #"{"a":99999999999999999999999999999}"#,
            // Not one object: batches, scalars, two objects, garbage after it.
            #"[{"a":1}]"#, #"[]"#, #""a""#, #"1"#, #"{"a":1}{"b":2}"#, #"{"a":1} x"#, #"{"a":1},"#, "",
            // Broken syntax.
            #"{"a":1,}"#, #"{,"a":1}"#, #"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{a:1}"#, #"{'a':1}"#, #"{"a":"x}"#, #"{"a":1"#, #"{"#,
            // Too deep, too wide.
            #"{"a":{"b":{"c":{"d":{}}}}}"#, #"{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9}"#,
        ] {
            XCTAssertNil(Self.read(Array(line.utf8)), line)
        }
    }

    func testEveryTruncationOfAPlainLineIsRefused() {
        let line = Array(#"{"jsonrpc":"2.0","id":12,"method":"sign","params":{"request":{"method":"GET","url":"https://a.example.com/"},"provider":"p"}}"#.utf8)
        XCTAssertNotNil(Self.read(line))
        for n in 0..<line.count {
            XCTAssertNil(Self.read(Array(line[..<n])), String(decoding: line[..<n], as: UTF8.self))
        }
    }

    /// Random damage to plain lines: whatever the scanner still accepts, the parser accepts and reads alike.
    func testNeverAcceptsWhatTheParserRejectsOrReadsDifferently() {
        let seeds = [
            #"{"jsonrpc":"2.0","id":-7,"method":"sign","params":{"request":{"method":"GET","url":"https://a.example.com/"},"provider":"p"}}"#,
            #"{ "a" : { "b" : "c" } , "d" : 10 , "e" : "" }"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]":,\ -+.0123456789eEatrufnlu"#.utf8) + [0x00, 0x09, 0x0A, 0x0D, 0x7F, 0x80, 0xC3, 0xA9, 0xFF]
        var random = SplitMix(seed: 14)
        var accepted = 0
        for i in 0..<30_000 {
            var line = seeds[i % seeds.count]
            for _ in 0..<(1 + random.next() % 3) {
                let at = Int(random.next() % UInt64(line.count + 1))
                let byte = alphabet[Int(random.next() % UInt64(alphabet.count))]
                switch random.next() % 3 {
                case 0 where at < line.count: line[at] = byte
                case 1 where at < line.count: line.remove(at: at)
                default: line.insert(byte, at: at)
                }
            }
            guard let plain = Self.read(line) else { continue }
            accepted += 1
            XCTAssertEqual(plain, try? JSONParser.parse(line), String(decoding: line, as: UTF8.self))
        }
        XCTAssertGreaterThan(accepted, 1000, "the damage should leave some lines plain, or the test proves nothing")
    }

    func testARequestHasVersionIdMethodAndParamsAndNothingElse() {
        let r = Self.request(#"{"method":"sign","params":{"x":"y"},"id":"a-1","jsonrpc":"2.0"}"#)
        XCTAssertEqual(r?.id, "a-1")
        XCTAssertEqual(r?.method, "sign")
        XCTAssertEqual(r?.params, ["x": "y"])
        XCTAssertEqual(Self.request(#"{"jsonrpc":"2.0","id":-0,"method":"m","params":{}}"#)?.id, 0, "as JSONParser reads -0")
        let bare = Self.request(#"{"jsonrpc":"2.0","method":"ping","id":1}"#)
        XCTAssertEqual(bare?.method, "ping")
        XCTAssertNotNil(bare)
        XCTAssertNil(bare?.params, "no params")
        for line in [
            #"{"jsonrpc":"2.0","method":"m","params":{}}"#,  // a notification
            #"{"jsonrpc":"2.0","id":null,"method":"m","params":{}}"#,
            #"{"jsonrpc":"2.0","id":{},"method":"m","params":{}}"#,
            #"{"jsonrpc":"2.0","id":1.5,"method":"m","params":{}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}"#,
            #"{"jsonrpc":"1.0","id":1,"method":"m","params":{}}"#,
            #"{"id":1,"method":"m","params":{}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":1,"params":{}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"extra":1}"#,
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"unwanted","params":{}}"#,
        ] {
            XCTAssertNil(Self.request(line), line)
        }
    }
}

/// A small deterministic generator, so a failure can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
