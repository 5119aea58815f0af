/// "Did you mean …?" for configuration keys and values.
///
/// A typo in a key (`tokenEndPoint`) must be an error, not silently ignored, and
/// the error is more useful when it names the intended key.
public enum KeySuggestion {
    /// The candidate that differs from `word` only in case and `_`/`-`, else the
    /// closest within an edit distance of 2; `nil` when nothing is close.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let folded = fold(word)
        if let same = candidates.first(where: { fold($0) == folded }) { return same }
        var best: (String, Int)?
        for candidate in candidates {
            let distance = editDistance(word, candidate)
            if distance <= 2, distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
        }
        return best?.0
    }

    private static func fold(_ s: String) -> String {
        String(s.lowercased().filter { $0 != "_" && $0 != "-" })
    }

    /// Levenshtein distance over Unicode scalars.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var previous = Array(0...y.count)
        var current = [Int](repeating: 0, count: y.count + 1)
        for i in 1...x.count {
            current[0] = i
            for j in 1...y.count {
                let substitution = previous[j - 1] + (x[i - 1] == y[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
            }
            swap(&previous, &current)
        }
        return previous[y.count]
    }
}
