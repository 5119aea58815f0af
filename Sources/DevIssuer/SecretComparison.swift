/// Comparison of passwords and client secrets that does not stop at the first
/// differing byte, so response timing does not reveal how much of a guess was right.
enum SecretComparison {
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8)
        let y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        for i in 0..<max(x.count, y.count) {
            let l = i < x.count ? x[i] : 0
            let r = i < y.count ? y[i] : 0
            difference |= l ^ r
        }
        return difference == 0 && x.count == y.count
    }
}
