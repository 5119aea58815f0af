import XCTest
import Wire

/// The one request-head reader the dev issuer's server and the agent's redirect listener share.
final class HTTPHeadTests: XCTestCase {
    private func parse(_ text: String) -> Result<HTTPRequestHead, HTTPHeadError> {
        HTTPRequestHead.parse(ArraySlice(Array(text.utf8)))
    }

    private func reason(_ text: String) -> String? {
        if case .failure(let error) = parse(text) { return error.reason }
        return nil
    }

    func testRequestLineAndHeaders() throws {
        let head = try parse("POST /token?x=1 HTTP/1.0\r\nHost: a\r\nconnection:  close \r\nX-A: 1\r\nx-a: 2").get()
        XCTAssertEqual(head.method, "POST")
        XCTAssertEqual(head.target, "/token?x=1")
        XCTAssertEqual(head.minorVersion, 0)
        XCTAssertEqual(head.headers.value("CONNECTION"), "close")
        XCTAssertEqual(head.headers.values("x-a"), ["1", "2"], "repeated fields stay visible")
        XCTAssertEqual(head.headers.tokens("Connection"), ["close"])
        XCTAssertEqual(try parse("GET / HTTP/1.1").get().headers.fields.count, 0, "a request line alone is a head")
    }

    func testBadRequestLines() {
        XCTAssertEqual(reason("GARBAGE"), "malformed request line")
        XCTAssertEqual(reason("GET /x HTTP/1.1 extra"), "malformed request line")
        XCTAssertEqual(reason("GET  /x HTTP/1.1"), "malformed request line", "one space between the parts, not two")
        XCTAssertEqual(reason(""), "malformed request line")
        XCTAssertEqual(reason("G(T /x HTTP/1.1"), "malformed method")
        XCTAssertEqual(reason("GET nopath HTTP/1.1"), "malformed request target")
        XCTAssertEqual(reason("GET /é HTTP/1.1"), "malformed request target")
        XCTAssertEqual(reason("GET /x HTTP/1"), "malformed HTTP version")
        guard case .failure(let error) = parse("GET /x HTTP/2.0") else { return XCTFail("HTTP/2.0 is not HTTP/1.x") }
        XCTAssertEqual(error.status, 505)
        XCTAssertEqual(parse("GARBAGE").failure?.status, 400)
        XCTAssertEqual(HTTPRequestHead.parse([0x47, 0xFF, 0x20][...]).failure?.reason, "request head is not UTF-8")
    }

    func testBadHeaderLines() {
        XCTAssertEqual(reason("GET / HTTP/1.1\r\nBad Header"), "header line without ':'")
        XCTAssertEqual(reason("GET / HTTP/1.1\r\nA: 1\r\n folded"), "obsolete header line folding")
        XCTAssertEqual(reason("GET / HTTP/1.1\r\n\r\nA: 1"), "empty header line")
        XCTAssertEqual(reason("GET / HTTP/1.1\r\nA B: 1"), "malformed header name")
        XCTAssertEqual(reason("GET / HTTP/1.1\r\nA: 1\u{1}"), "control character in header value")
    }

    /// Only CRLF ends a line: a lone LF stays inside the line, where it is refused.
    func testLoneLFIsNotALineEnd() {
        XCTAssertEqual(reason("GET / HTTP/1.1\nHost: a"), "malformed request line")
        XCTAssertEqual(reason("GET / HTTP/1.1\r\nHost: a\nX: b"), "control character in header value")
        XCTAssertEqual(HTTPHeadScan.scan(Array("GET / HTTP/1.1\n\n".utf8), limit: 100), .incomplete(resumeAt: 13))
    }

    func testScanFindsTheBlankLineWithinTheLimit() {
        let bytes = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\nbody".utf8)
        XCTAssertEqual(HTTPHeadScan.scan(bytes, limit: 1_000), .complete(length: 23))
        XCTAssertEqual(HTTPHeadScan.scan(bytes, from: 20, limit: 1_000), .complete(length: 23), "resumes where it left off")
        XCTAssertEqual(HTTPHeadScan.scan(bytes, limit: 27), .complete(length: 23), "head and blank line exactly at the limit")
        XCTAssertEqual(HTTPHeadScan.scan(bytes, limit: 26), .tooLarge)
        let partial = Array("GET / HTTP/1.1\r\nHost: x\r\n\r".utf8)
        XCTAssertEqual(HTTPHeadScan.scan(partial, limit: 1_000), .incomplete(resumeAt: partial.count - 3))
        XCTAssertEqual(HTTPHeadScan.scan(partial, limit: partial.count - 1), .tooLarge, "no blank line yet and already over")
        XCTAssertEqual(HTTPHeadScan.scan([], limit: 10), .incomplete(resumeAt: 0))
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
