import XCTest
import AuthCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class RFC3339Tests: XCTestCase {
    func testFormat() {
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 1_795_327_321)), "2026-11-22T06:02:01Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 0)), "1970-01-01T00:00:00Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 1.999)), "1970-01-01T00:00:01Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: -0.5)), "1969-12-31T23:59:59Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 951_782_400)), "2000-02-29T00:00:00Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: 253_402_300_799)), "9999-12-31T23:59:59Z")
        XCTAssertEqual(RFC3339.format(Date(timeIntervalSince1970: .infinity)), "9999-12-31T23:59:59Z")
        XCTAssertEqual(RFC3339.format(Date.distantPast), "0001-01-01T00:00:00Z")
    }

    func testFormatAgreesWithGmtime() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let t = Int.random(in: -2_000_000_000...8_000_000_000, using: &generator)
            var seconds = time_t(t)
            var parts = tm()
            gmtime_r(&seconds, &parts)
            var buffer = [CChar](repeating: 0, count: 32)
            let n = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
            let expected = String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let text = RFC3339.format(Date(timeIntervalSince1970: Double(t)))
            XCTAssertEqual(text, expected)
            XCTAssertEqual(RFC3339.parse(text), Date(timeIntervalSince1970: Double(t)))
        }
    }

    func testParseOffsetsAndFractions() {
        let instant = Date(timeIntervalSince1970: 1_795_327_321)
        XCTAssertEqual(RFC3339.parse("2026-11-22T06:02:01Z"), instant)
        XCTAssertEqual(RFC3339.parse("2026-11-22t06:02:01z"), instant)
        XCTAssertEqual(RFC3339.parse("2026-11-22T08:02:01+02:00"), instant)
        XCTAssertEqual(RFC3339.parse("2026-11-22T00:32:01-05:30"), instant)
        XCTAssertEqual(RFC3339.parse("2026-11-22T06:02:01+00:00"), instant)
        XCTAssertEqual(RFC3339.parse("2026-11-22T06:02:01.5Z"), Date(timeIntervalSince1970: 1_795_327_321.5))
        let precise = RFC3339.parse("2026-11-22T06:02:01.123456789+01:00")!.timeIntervalSince1970
        XCTAssertEqual(precise, 1_795_327_321.123456789 - 3600, accuracy: 1e-6)
        XCTAssertEqual(RFC3339.parse("2024-02-29T00:00:00Z"), Date(timeIntervalSince1970: 1_709_164_800))
        XCTAssertEqual(RFC3339.parse("2026-12-31T23:59:60Z"), RFC3339.parse("2027-01-01T00:00:00Z"), "leap second")
    }

    func testParseRejects() {
        for text in ["", "2026-11-22", "2026-11-22T06:02:01", "2026-11-22 06:02:01Z", "2026-11-22T06:02Z",
                     "2026-13-01T00:00:00Z", "2026-00-01T00:00:00Z", "2026-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
                     "2026-11-22T24:00:00Z", "2026-11-22T06:60:00Z", "2026-11-22T06:02:61Z", "2026-11-22T06:02:01.Z",
                     "2026-11-22T06:02:01+0200", "2026-11-22T06:02:01+24:00", "2026-11-22T06:02:01Zjunk",
                     "26-11-22T06:02:01Z", "2026-1-22T06:02:01Z", "+2026-11-22T06:02:01Z", "２０２６-11-22T06:02:01Z"] {
            XCTAssertNil(RFC3339.parse(text), text)
        }
    }
}
