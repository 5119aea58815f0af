/// Strict UTF-8 validation (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
///
/// Written out rather than using `String(validating:)`, which needs macOS 15.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            let b0 = bytes[i]
            if b0 < 0x80 {
                i += 1
                continue
            }
            // Continuation count and the allowed range of the first continuation byte.
            let need: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch b0 {
            case 0xC2...0xDF: need = 1
            case 0xE0: need = 2; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: need = 2
            case 0xED: need = 2; upper = 0x9F
            case 0xF0: need = 3; lower = 0x90
            case 0xF1...0xF3: need = 3
            case 0xF4: need = 3; upper = 0x8F
            default: return false
            }
            guard i + need < n else { return false }
            let b1 = bytes[i + 1]
            guard b1 >= lower && b1 <= upper else { return false }
            var k = 2
            while k <= need {
                guard bytes[i + k] & 0xC0 == 0x80 else { return false }
                k += 1
            }
            i += need + 1
        }
        return true
    }
}
