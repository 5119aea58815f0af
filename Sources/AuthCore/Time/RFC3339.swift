#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// RFC 3339 timestamps (`2026-11-22T06:02:01Z`), as the session file stores them.
///
/// Done with calendar arithmetic rather than `DateFormatter`, which is slow to
/// create, depends on the process locale and calendar, and differs between
/// platforms. Formatting is always UTC with whole seconds (truncated), so the
/// same instant always prints the same text.
public enum RFC3339 {
    /// UTC, whole seconds, truncated toward the past. Instants outside years
    /// 0001...9999 (which RFC 3339 cannot write) are clamped to that range.
    public static func format(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        let total = seconds.isNaN ? 0 : Int64(min(max(seconds, -62_135_596_800), 253_402_300_799).rounded(.down))
        let days = floorDiv(total, 86_400)
        let secondOfDay = total - days * 86_400
        let (year, month, day) = civil(fromDays: days)
        let hour = secondOfDay / 3600
        let minute = secondOfDay / 60 % 60
        let second = secondOfDay % 60
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
            + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `T` and `Z` in either case.
    /// `nil` for anything else, including impossible dates like February 30.
    public static func parse(_ s: String) -> Date? {
        var reader = DigitReader(Array(s.utf8))
        guard let year = reader.number(4), reader.expect("-"),
              let month = reader.number(2), reader.expect("-"),
              let day = reader.number(2), reader.expect("T") || reader.expect("t"),
              let hour = reader.number(2), reader.expect(":"),
              let minute = reader.number(2), reader.expect(":"),
              let second = reader.number(2)
        else { return nil }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var fraction = 0.0
        if reader.expect(".") {
            let digits = reader.digitRun()
            guard !digits.isEmpty, let value = Double("0." + digits) else { return nil }
            fraction = value
        }
        var offsetSeconds: Int64 = 0
        if reader.expect("Z") || reader.expect("z") {
            offsetSeconds = 0
        } else {
            let sign: Int64
            if reader.expect("+") { sign = 1 } else if reader.expect("-") { sign = -1 } else { return nil }
            guard let offsetHour = reader.number(2), reader.expect(":"), let offsetMinute = reader.number(2),
                  offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard reader.atEnd else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(local - offsetSeconds) + fraction)
    }

    static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDiv(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The inverse of `daysFromCivil`.
    static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = floorDiv(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        a >= 0 ? a / b : -((-a + b - 1) / b)
    }

    static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }
}

/// A cursor over ASCII bytes for fixed-width numeric fields.
private struct DigitReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func expect(_ c: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: c) else { return false }
        index += 1
        return true
    }

    /// Exactly `width` digits.
    mutating func number(_ width: Int) -> Int64? {
        guard bytes.count - index >= width else { return nil }
        var value: Int64 = 0
        for _ in 0..<width {
            let c = bytes[index]
            guard c >= 0x30, c <= 0x39 else { return nil }
            value = value * 10 + Int64(c - 0x30)
            index += 1
        }
        return value
    }

    mutating func digitRun() -> String {
        let start = index
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }
}
