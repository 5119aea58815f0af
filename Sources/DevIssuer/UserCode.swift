/// The short code a person types on the verification page (RFC 8628 §6.1).
///
/// Eight characters from twenty consonants (about 34 bits) shown as `WDJB-MJHT`:
/// no vowels so no words are spelled, no digits or look-alike letters to mistype.
/// Entry is forgiving: case, spaces and dashes are ignored.
enum UserCode {
    static let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")

    static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        let letters = (0..<8).map { _ in alphabet.randomElement(using: &generator)! }
        return String(letters[0..<4]) + "-" + String(letters[4..<8])
    }

    /// The canonical `XXXX-XXXX` form of what a person entered, or `nil` when it cannot be a user code.
    static func normalize(_ entered: String) -> String? {
        let letters = entered.uppercased().filter { $0 != "-" && $0 != " " }
        guard letters.count == 8, letters.allSatisfy(alphabet.contains) else { return nil }
        return String(letters.prefix(4)) + "-" + String(letters.suffix(4))
    }
}
