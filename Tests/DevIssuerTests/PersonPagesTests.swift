import DevIssuer
import Foundation
import XCTest

/// The pages a person sees at the dev issuer (the demo's first impression): styled inline, made
/// for phones too, in a declared language, with errors announced and the username kept after a
/// wrong password. BrowserLoginTests (AgentTests) drives them in a real browser.
final class PersonPagesTests: IssuerTestCase {
    func testSignInPageKeepsTheUsernameAndAlertsAfterAWrongPassword() throws {
        let fields = [("response_type", "code"), ("client_id", "cli"), ("redirect_uri", AuthorizationCodeTests.redirectURI), ("state", "s"),
                      ("code_challenge", AuthorizationCodeTests.challenge), ("code_challenge_method", "S256"), ("scope", "openid profile")]
        let first = try get("/authorize?" + fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&"))
        Self.assertPersonPage(first.text)
        XCTAssertTrue(first.text.contains("<code>openid</code> <code>profile</code>"), "the scopes asked for: \(first.text)")
        let wrong = try postForm("/authorize", fields + [("username", "alice\"<b>"), ("password", "nope"), ("action", "approve")])
        XCTAssertEqual(wrong.status, 200)
        Self.assertPersonPage(wrong.text)
        XCTAssertTrue(wrong.text.contains("role=\"alert\">Invalid username or password."), wrong.text)
        XCTAssertTrue(wrong.text.contains("name=\"username\" value=\"alice&quot;&lt;b&gt;\""), "the username stays, escaped: \(wrong.text)")
        XCTAssertTrue(wrong.text.range(of: #"name="password"[^>]*autofocus"#, options: .regularExpression) != nil, "the cursor waits for the password")
        XCTAssertFalse(wrong.text.contains("nope"), "the password is never echoed")
    }

    func testDevicePageKeepsTheUsernameAndAlertsAfterAWrongPassword() throws {
        let started = try postForm("/device_authorization", [("client_id", "cli")])
        let userCode = try XCTUnwrap(started.json?["user_code"]?.stringValue)
        Self.assertPersonPage(try get("/device?user_code=" + userCode).text)
        let wrong = try postForm("/device", [("user_code", userCode), ("username", "bob"), ("password", "x"), ("action", "approve")])
        Self.assertPersonPage(wrong.text)
        XCTAssertTrue(wrong.text.contains("role=\"alert\">Invalid username or password."), wrong.text)
        XCTAssertTrue(wrong.text.contains("name=\"username\" value=\"bob\""), wrong.text)
        let approved = try postForm("/device", [("user_code", userCode), ("username", "bob"), ("password", "builder"), ("action", "approve")])
        Self.assertPersonPage(approved.text)
    }

    /// `lang`, a viewport, an inline stylesheet, and nothing loaded from elsewhere.
    static func assertPersonPage(_ html: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"), html, file: file, line: line)
        XCTAssertTrue(html.contains("<html lang=\"en\">"), html, file: file, line: line)
        XCTAssertTrue(html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), html, file: file, line: line)
        XCTAssertTrue(html.contains("<style>") && html.contains("</style>"), html, file: file, line: line)
        for external in ["<script", "<link", "src=", "url(", "@import"] {
            XCTAssertFalse(html.contains(external), "\(external) in \(html)", file: file, line: line)
        }
    }
}
