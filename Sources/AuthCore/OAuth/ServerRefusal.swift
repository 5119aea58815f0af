/// A server's refusal in OAuth's words — its `error` code and `error_description` (RFC 6749
/// §4.1.2.1 and §5.2, RFC 8628 §3.5, RFC 7591 §3.2.2) — made fit to show: the server chose the
/// text, and it goes into error messages, `data.serverDescription` and the log, so a control
/// character is escaped (a newline cannot start a forged log line, an escape sequence cannot
/// reach a terminal) and the length bounded. Keeping the description is the point: "Pushed
/// Authorization Request must be used" tells a person what to change; `invalid_request` does not.
public struct ServerRefusal: Sendable, Equatable {
    /// The `error` code (or `http_<status>` when the server gave none), made safe.
    public let error: String
    /// The `error_description`, made safe and at most `descriptionLimit` characters; nil when absent or empty.
    public let description: String?

    static let descriptionLimit = 300
    static let errorLimit = 64

    public init(error: String, description: String?) {
        self.error = Self.safe(error, limit: Self.errorLimit)
        self.description = description.flatMap { $0.isEmpty ? nil : Self.safe($0, limit: Self.descriptionLimit) }
    }

    /// "error: description", or the error alone: how messages and logs say it.
    public var line: String { description.map { "\(error): \($0)" } ?? error }

    /// `text` with every control, format and line-separating character written as its Swift
    /// escape (`\n`, `\r`, `\t`, `\u{1B}`), cut to `limit` characters (the last one `…` when cut).
    static func safe(_ text: String, limit: Int) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                switch scalar.properties.generalCategory {
                case .control, .format, .lineSeparator, .paragraphSeparator:
                    escaped += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
                default:
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        guard escaped.count > limit else { return escaped }
        return String(escaped.prefix(limit - 1)) + "…"
    }
}
