import JSONRPC
import XCTest

final class LineFramerTests: XCTestCase {
    private func frame(_ chunks: [String], max: Int = 16) -> [String] {
        var framer = LineFramer(maxLineBytes: max)
        var out: [String] = []
        let emit: (LineFramer.Event) -> Void = { e in
            switch e {
            case .line(let l): out.append(String(decoding: l, as: UTF8.self))
            case .oversized: out.append("<oversized>")
            }
        }
        for c in chunks {
            Array(c.utf8).withUnsafeBufferPointer { framer.feed($0, emit) }
        }
        framer.finish(emit)
        return out
    }

    func testSplitsLinesAcrossChunks() {
        XCTAssertEqual(frame(["a\nb", "c\n", "d"]), ["a", "bc", "d"])
        XCTAssertEqual(frame(["ab", "c", "\n"]), ["abc"])
    }

    func testCRLFAndBlankLines() {
        XCTAssertEqual(frame(["a\r\n\r\n\n  \t\nb\r\n"]), ["a", "b"])
    }

    func testOversizedInOneChunk() {
        XCTAssertEqual(frame(["0123456789abcdefXYZ\nok\n"]), ["<oversized>", "ok"])
    }

    func testOversizedAcrossChunksIsNotBuffered() {
        XCTAssertEqual(frame(["0123456789", "abcdefXYZ", String(repeating: "z", count: 1000), "\nok\n"]), ["<oversized>", "ok"])
        XCTAssertEqual(frame(["0123456789", "abcdefXYZ\n"]), ["<oversized>"])
        XCTAssertEqual(frame(["0123456789", "abcdefXYZ"]), ["<oversized>"])
    }

    func testExactlyAtTheLimit() {
        XCTAssertEqual(frame(["0123456789abcdef\n"]), ["0123456789abcdef"])
        XCTAssertEqual(frame(["01234567", "89abcdef\n"]), ["0123456789abcdef"])
        XCTAssertEqual(frame(["01234567", "89abcdefg\n"]), ["<oversized>"])
    }
}
