import Foundation

/// Plays the user on django-oauth-toolkit's pages with a `Browser`: signs in on
/// Django's login form (CSRF token and `next` carried over from the page), grants
/// consent, enters a device user code and accepts the device — whatever page the
/// server shows next — until a page has none of those forms.
struct InteropUser {
    let browser: Browser
    let username: String
    let password: String
    /// Pages submitted so far, for failure messages.
    private(set) var steps: [String] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(browser: Browser, username: String, password: String) {
        self.browser = browser
        self.username = username
        self.password = password
    }

    /// Opens `url` and answers every form until there is none left; returns the last page.
    /// `userCode` is what to type on the device page, if one appears; a redirect to a URL
    /// for which `stopAt` is true ends the walk and is returned unfollowed.
    mutating func complete(startingAt url: String, userCode: String? = nil, maxForms: Int = 6,
                           stopAt: ((URL) -> Bool)? = nil) throws -> Browser.Response {
        var page = try browser.navigate(url, stopAt: stopAt)
        for _ in 0..<maxForms {
            let forms = HTMLForm.all(in: page.body).filter { $0.method == "post" }
            let filled: (HTMLForm, [(String, String)])
            if let login = forms.first(where: { $0.html.contains("name=\"password\"") }) {
                if steps.last == "login" { throw Failure(description: "the server rejected the credentials again:\n\(page.body.prefix(800))") }
                filled = (login, [("username", username), ("password", password)])
                steps.append("login")
            } else if let consent = forms.first(where: { $0.html.contains("name=\"allow\"") }) {
                filled = (consent, [("allow", "Authorize")])
                steps.append("consent")
            } else if let device = forms.first(where: { $0.html.contains("name=\"user_code\"") }) {
                guard let code = userCode ?? device.fields.first(where: { $0.name == "user_code" })?.value, !code.isEmpty else {
                    throw Failure(description: "the device page asks for a user code and none was given")
                }
                filled = (device, [("user_code", code)])
                steps.append("user code")
            } else if let confirm = forms.first(where: { $0.html.contains("value=\"accept\"") }) {
                filled = (confirm, [("action", "accept")])
                steps.append("accept device")
            } else {
                return page
            }
            page = try browser.submit(filled.0.filled(filled.1), to: filled.0.target(relativeTo: page.url), stopAt: stopAt)
        }
        throw Failure(description: "still being shown forms after \(maxForms) submissions (\(steps)):\n\(page.body.prefix(800))")
    }
}
