import XCTest
import Wire

final class HTTPTextTests: XCTestCase {
    func testTrimsSpacesAndTabsOnly() {
        XCTAssertEqual(HTTPText.trimmingWhitespace(" \t application/json \t "), "application/json")
        XCTAssertEqual(HTTPText.trimmingWhitespace("a b"), "a b", "inner whitespace stays")
        XCTAssertEqual(HTTPText.trimmingWhitespace(" \t "), "")
        XCTAssertEqual(HTTPText.trimmingWhitespace(""), "")
        XCTAssertEqual(HTTPText.trimmingWhitespace(" é😀 "), "é😀", "non-ASCII survives byte-wise trimming")
        XCTAssertEqual(HTTPText.trimmingWhitespace("x\r"), "x\r", "CR is not optional whitespace (RFC 9110 §5.6.3)")
        let line = "Content-Type:  text/html "
        XCTAssertEqual(HTTPText.trimmingWhitespace(line[line.index(after: line.firstIndex(of: ":")!)...]), "text/html")
    }

    func testComparesASCIICaseInsensitively() {
        XCTAssertTrue(HTTPText.equalIgnoringCase("Content-Length", "content-LENGTH"))
        XCTAssertTrue(HTTPText.equalIgnoringCase("Bearer"[...], "bearer"))
        XCTAssertFalse(HTTPText.equalIgnoringCase("Bearer", "Bearer "))
        XCTAssertFalse(HTTPText.equalIgnoringCase("Basic", "Bearer"))
        XCTAssertFalse(HTTPText.equalIgnoringCase("[", "{"), "only letters fold: '[' | 0x20 is '{'")
    }
}
