import Foundation

/// A `<form>` read out of an HTML page: where it posts and the values of its
/// inputs, so a test can submit a server's real login or consent form the way a
/// browser would (hidden CSRF tokens and state included). Deliberately small:
/// regular expressions over well-formed server templates, not a general HTML parser.
struct HTMLForm {
    var action: String?
    var method: String
    /// `<input>` name/value pairs in document order; buttons and unchecked boxes excluded.
    var fields: [(name: String, value: String)]
    /// The form's inner HTML, for picking a form by what it contains.
    var html: String

    /// Every form on `page`.
    static func all(in page: String) -> [HTMLForm] {
        matches(#"<form\b([^>]*)>(.*?)</form>"#, in: page).map { groups in
            let attributes = Self.attributes(groups[1])
            var fields: [(name: String, value: String)] = []
            for input in matches(#"<input\b([^>]*)>"#, in: groups[2]) {
                let a = Self.attributes(input[1])
                let type = (a["type"] ?? "text").lowercased()
                guard let name = a["name"], !["submit", "button", "image", "reset", "file"].contains(type) else { continue }
                if type == "checkbox" || type == "radio", a["checked"] == nil { continue }
                fields.append((name, a["value"] ?? ""))
            }
            return HTMLForm(action: attributes["action"], method: (attributes["method"] ?? "get").lowercased(), fields: fields, html: groups[2])
        }
    }

    /// The first form containing `marker` (e.g. `name="password"`).
    static func first(containing marker: String, in page: String) -> HTMLForm? {
        all(in: page).first { $0.html.contains(marker) }
    }

    /// The URL the form submits to, resolved against the page's own URL.
    func target(relativeTo page: URL) -> URL {
        guard let action, !action.isEmpty else { return page }
        return URL(string: action, relativeTo: page)?.absoluteURL ?? page
    }

    /// The fields with `overrides` replacing or adding values.
    func filled(_ overrides: [(String, String)]) -> [(String, String)] {
        var out = fields.map { ($0.name, $0.value) }
        for (name, value) in overrides {
            if let i = out.firstIndex(where: { $0.0 == name }) { out[i].1 = value } else { out.append((name, value)) }
        }
        return out
    }

    private static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive, .dotMatchesLineSeparators]) else { return [] }
        let ns = text as NSString
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { match in
            (0..<match.numberOfRanges).map { i in
                let range = match.range(at: i)
                return range.location == NSNotFound ? "" : ns.substring(with: range)
            }
        }
    }

    private static func attributes(_ text: String) -> [String: String] {
        var out: [String: String] = [:]
        for groups in matches(#"([a-zA-Z_:][-a-zA-Z0-9_:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?"#, in: text) {
            let value = [groups[2], groups[3], groups[4]].first { !$0.isEmpty } ?? ""
            out[groups[1].lowercased()] = unescape(value)
        }
        return out
    }

    /// The character references Django and the dev issuer emit in attribute values.
    static func unescape(_ text: String) -> String {
        var out = text
        for (entity, character) in [("&quot;", "\""), ("&#x27;", "'"), ("&#39;", "'"), ("&lt;", "<"), ("&gt;", ">"), ("&amp;", "&")] {
            out = out.replacingOccurrences(of: entity, with: character)
        }
        return out
    }
}
