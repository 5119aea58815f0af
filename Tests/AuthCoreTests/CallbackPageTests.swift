@testable import AuthCore
import XCTest

/// The page the browser lands on after a browser login: styled like the issuer's pages, inline
/// only, and a failure announced as an alert.
final class CallbackPageTests: XCTestCase {
    func testSuccessPageIsStyledInlineWithViewportAndLanguage() {
        let page = LoopbackRedirectListener.page(ok: true, "You are signed in to Web <SSO>. You can close this tab.")
        XCTAssertTrue(page.hasPrefix("<!DOCTYPE html>\n<html lang=\"en\">"), page)
        XCTAssertTrue(page.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), page)
        XCTAssertTrue(page.contains("<style>"), page)
        XCTAssertTrue(page.contains("<h1>Login finished</h1><p>You are signed in to Web &lt;SSO&gt;."), page)
        XCTAssertFalse(page.contains("role=\"alert\""), page)
        for external in ["<script", "<link", "src=", "url(", "@import"] { XCTAssertFalse(page.contains(external), external) }
    }

    func testFailurePageIsAnAlert() {
        let page = LoopbackRedirectListener.page(ok: false, "The sign-in was not completed (access_denied).")
        XCTAssertTrue(page.contains("<h1>Login not finished</h1><p class=\"error\" role=\"alert\">The sign-in was not completed (access_denied).</p>"), page)
    }
}
