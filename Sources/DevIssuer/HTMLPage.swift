import Wire

/// The few HTML pages the issuer shows a person (device verification, the
/// authorization login form): no scripts or external resources, only an inline
/// stylesheet (`PageStyle`), so a test can drive them with bare HTTP and a human
/// with any browser, a phone's included.
enum HTMLPage {
    /// A whole document around `body` (already HTML). Never cached or framed: the
    /// pages carry credentials forms and one-time codes.
    /// - Parameter ok: a decision page's mark above the title (✓ or ✗), as on the agent's page.
    static func response(_ status: Int, title: String, ok: Bool? = nil, body: String) -> HTTPResponse {
        let mark = ok.map { "<p class=\"status \($0 ? "ok" : "failed")\" aria-hidden=\"true\">\($0 ? "✓" : "✗")</p>" } ?? ""
        let document = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><title>\(HTMLText.escape(title))</title>
            \(PageStyle.head)</head>
            <body><main>\(mark)<h1>\(HTMLText.escape(title))</h1>
            \(body)
            </main></body></html>

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
    /// The username typed before a wrong password stays, and the cursor waits in the first
    /// empty field (no script: `autofocus`). Approve comes first: Enter submits the first button.
    static func credentialFields(username: String = "", approve: String = "Approve") -> String {
        let focusUser = username.isEmpty ? " autofocus" : "", focusPassword = username.isEmpty ? "" : " autofocus"
        return """
            <label for="username">Username</label>
            <input id="username" name="username" value="\(HTMLText.escape(username))" autocomplete="username" required\(focusUser)>
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required\(focusPassword)>
            <div class="actions"><button type="submit" name="action" value="approve" class="primary">\(HTMLText.escape(approve))</button>
            <button type="submit" name="action" value="deny" formnovalidate>Deny</button></div>
            """
    }
}
