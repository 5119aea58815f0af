/// Text made safe for HTML element content and quoted attribute values.
///
/// Both loopback pages a person sees — the dev issuer's forms and the agent's
/// "login finished" page — echo values from a request (`state`, `user_code`,
/// an `error` from the redirect); escaping them keeps that from injecting markup.
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
