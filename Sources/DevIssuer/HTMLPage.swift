import Wire

/// The few HTML pages the issuer shows a person (device verification, the
/// authorization login form): deliberately plain, no scripts or external
/// resources, so a test can drive them with bare HTTP and a human with any browser.
enum HTMLPage {
    /// A whole document around `body` (already HTML). Never cached or framed: the
    /// pages carry credentials forms and one-time codes.
    static func response(_ status: Int, title: String, body: String) -> HTTPResponse {
        let document = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTMLText.escape(title))</title></head>
            <body><h1>\(HTMLText.escape(title))</h1>
            \(body)
            </body></html>

            """
        return HTTPResponse(status: status,
                            headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                                      ("X-Frame-Options", "DENY")],
                            body: Array(document.utf8))
    }

    /// `<input type="hidden">` for each pair, in order.
    static func hiddenInputs(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { "<input type=\"hidden\" name=\"\(HTMLText.escape($0.name))\" value=\"\(HTMLText.escape($0.value))\">" }.joined(separator: "\n")
    }

    /// A paragraph flagged as an error, or nothing.
    static func errorParagraph(_ message: String?) -> String {
        message.map { "<p class=\"error\" role=\"alert\">\(HTMLText.escape($0))</p>\n" } ?? ""
    }

    /// Username and password fields and approve/deny buttons, shared by both login forms.
    static let credentialFields = """
        <p><label>Username <input name="username" autocomplete="username"></label></p>
        <p><label>Password <input name="password" type="password" autocomplete="current-password"></label></p>
        <p><button type="submit" name="action" value="approve">Approve</button>
        <button type="submit" name="action" value="deny">Deny</button></p>
        """
}
