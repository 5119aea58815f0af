@testable import AuthCore
import XCTest

/// MCP's SSE answers arrive in arbitrary pieces: events must come out whole, as soon as complete.
final class SSEParserTests: XCTestCase {
    private func feed(_ pieces: [String], into parser: inout SSEParser) throws -> [SSEEvent] {
        var events: [SSEEvent] = []
        for piece in pieces { events += try parser.feed(Array(piece.utf8)) }
        return events
    }

    func testEventsEndAtBlankLinesWhateverTheLineEndings() throws {
        var parser = SSEParser()
        let events = try feed(["event: message\r\ndata: {\"a\":1}\r\n\r\ndata: x\n\ndata: y\r\r"], into: &parser)
        XCTAssertEqual(events.map { String(decoding: $0.data, as: UTF8.self) }, ["{\"a\":1}", "x", "y"])
        XCTAssertEqual(events.map(\.event), ["message", "message", "message"])
    }

    func testACRLFSplitAcrossPiecesIsOneLineEnd() throws {
        var parser = SSEParser()
        XCTAssertEqual(try feed(["data: a\r"], into: &parser), [])
        // Were the LF a line of its own, it would dispatch "a" as an event here.
        XCTAssertEqual(try feed(["\n"], into: &parser), [])
        XCTAssertEqual(try feed(["\r\n"], into: &parser).map { String(decoding: $0.data, as: UTF8.self) }, ["a"])
    }

    func testDataLinesJoinWithLFAndCommentsAreSkipped() throws {
        var parser = SSEParser()
        let events = try feed([": keep-alive\n\n", "data: {\n", "data:  \"b\": 2\n", "data: }\n", "\n"], into: &parser)
        XCTAssertEqual(events.count, 1)
        XCTAssertEqual(String(decoding: events[0].data, as: UTF8.self), "{\n \"b\": 2\n}")
    }

    func testIdsAndRetryAreKeptForResumption() throws {
        var parser = SSEParser()
        let events = try feed(["id: 7\nretry: 2500\ndata: a\n\ndata: b\n\n"], into: &parser)
        XCTAssertEqual(events.map(\.id), ["7", nil])
        XCTAssertEqual(parser.lastEventId, "7")
        XCTAssertEqual(parser.retryMilliseconds, 2500)
    }

    func testAnEventThatNeverEndsIsMalformed() {
        var parser = SSEParser(maxEventBytes: 64)
        XCTAssertThrowsError(try parser.feed(Array(("data: " + String(repeating: "x", count: 100)).utf8)))
    }

    func testMcpNameTravelsAsBase64WhenNotPlainASCII() {
        XCTAssertEqual(MCPMessage.headerValue("echo"), "echo")
        XCTAssertEqual(MCPMessage.headerValue("grüß"), "=?base64?Z3LDvMOf?=")
        XCTAssertEqual(MCPMessage.headerValue(" padded"), "=?base64?IHBhZGRlZA==?=")
    }
}
