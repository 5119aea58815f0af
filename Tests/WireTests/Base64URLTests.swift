import XCTest
import Wire

final class Base64URLTests: XCTestCase {
    private let vectors: [(String, String, String)] = [
        ("", "", ""), ("f", "Zg", "Zg=="), ("fo", "Zm8", "Zm8="), ("foo", "Zm9v", "Zm9v"),
        ("foob", "Zm9vYg", "Zm9vYg=="), ("fooba", "Zm9vYmE", "Zm9vYmE="), ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
    ]

    func testRFC4648Vectors() {
        for (plain, url, standard) in vectors {
            XCTAssertEqual(Base64URL.encode(Array(plain.utf8)), url)
            XCTAssertEqual(Base64URL.standardEncode(Array(plain.utf8)), standard)
            XCTAssertEqual(Base64URL.decode(url), Array(plain.utf8), url)
            XCTAssertEqual(Base64URL.decode(standard), Array(plain.utf8), standard)
        }
    }

    func testURLSafeAlphabet() {
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF, 0xBF]), "-_-_")
        XCTAssertEqual(Base64URL.standardEncode([0xFB, 0xFF, 0xBF]), "+/+/")
        XCTAssertEqual(Base64URL.decode("-_-_"), [0xFB, 0xFF, 0xBF])
        XCTAssertEqual(Base64URL.encode([0xFB, 0xFF]), "-_8")
        XCTAssertEqual(Base64URL.standardEncode([0xFB, 0xFF]), "+/8=")
    }

    func testRejectsInvalid() {
        for text in ["Z", "Zg=", "Zg===", "Z===", "+/+/", "Zm9v!", "Zm 9v", "a=bc", "=", "Zg==Zg=="] {
            XCTAssertNil(Base64URL.decode(text), text)
        }
    }

    func testRoundTripsAllLengths() {
        var generator = SystemRandomNumberGenerator()
        for length in 0..<70 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let encoded = Base64URL.encode(bytes)
            XCTAssertFalse(encoded.contains("="))
            XCTAssertEqual(Base64URL.decode(encoded), bytes)
        }
    }
}
