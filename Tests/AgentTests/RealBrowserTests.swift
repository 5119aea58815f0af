import DevIssuer
import Foundation
import JSON
import TestSupport
import XCTest

/// Whole logins in a real browser — Debian's `chromium` and `chromium-driver`, driven by
/// Selenium (Tests/CLI/browser_drive.py) — the way a person meets them: the prompt's URL opened,
/// the dev issuer's pages read, typed into and clicked, and the agent's page landed on. A
/// screenshot of every page is kept in `.build/test-artifacts/real-browser/` (path printed), for
/// a person to look at. Skips, saying why, without chromium, chromedriver, python3's venv or
/// PyPI (Selenium is installed from there into a venv under the temporary directory, reused).
final class RealBrowserTests: XCTestCase {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    private static let requirement = "selenium>=4.11,<5"

    /// Browser login: a wrong password (the error, the username kept), then alice consents and
    /// lands on the agent's callback page; the agent's `login` answers with alice.
    func testBrowserLoginInChromium() throws {
        let python = try Self.seleniumPython()
        let issuer = DevIssuer()
        _ = try issuer.start(port: 0)
        defer { issuer.stop() }
        let directory = try TemporaryDirectory(prefix: "auth-agent-real-browser")
        defer { directory.remove() }
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(issuer.baseURL), "clientId": "cli", "scopes": ["openid", "profile"]]],
        ]
        let path = directory.url.appendingPathComponent("config.json")
        try Data(JSONSerializer.bytes(config)).write(to: path)
        let agent = try AgentConversation(arguments: ["--config", path.path])
        let login = try agent.send("login", ["provider": "web"])
        let url = try XCTUnwrap(try agent.notification("loginPrompt")["params"]?["url"]?.stringValue)

        let pages = try drive(python, "signin", url, artifacts: "browser-login", profile: directory.url)
        XCTAssertEqual(pages.map(\.name), ["sign-in", "wrong-password", "agent-callback"])
        guard pages.count == 3 else { return }
        for page in pages { Self.assertLooksLikeAPage(page) }
        XCTAssertEqual(pages[0].title, "Sign in")
        XCTAssertTrue(pages[0].text.contains("openid profile"), pages[0].text)
        XCTAssertEqual(pages[1].alert, "Invalid username or password.")
        XCTAssertEqual(pages[1].username, "alice", "the username stays after a wrong password")
        XCTAssertEqual(pages[2].title, "Login finished")
        XCTAssertTrue(pages[2].text.contains("You are signed in to Web SSO. You can close this tab."), pages[2].text)
        XCTAssertTrue(pages[2].url.hasPrefix("http://127.0.0.1:") && pages[2].url.contains("/callback?"), pages[2].url)
        let answer = try agent.answer(to: login)
        XCTAssertEqual(answer["result"]?["user"]?["sub"], "alice", "\(answer)")
    }

    /// Device login with `auth-agent demo` (its `demo-device` provider): the verification page
    /// opened from the prompt, approved as alice; the agent's `login` answers with alice.
    func testDeviceApprovalInChromiumWithTheDemo() throws {
        let python = try Self.seleniumPython()
        let directory = try TemporaryDirectory(prefix: "auth-agent-real-browser")
        defer { directory.remove() }
        let agent = try AgentConversation(arguments: ["demo"])
        let login = try agent.send("login", ["provider": "demo-device"])
        let prompt = try agent.notification("loginPrompt")["params"]
        let url = try XCTUnwrap(prompt?["verificationUriComplete"]?.stringValue)
        let code = try XCTUnwrap(prompt?["userCode"]?.stringValue)

        let pages = try drive(python, "device", url, artifacts: "device-approval", profile: directory.url)
        XCTAssertEqual(pages.map(\.name), ["device", "device-approved"])
        guard pages.count == 2 else { return }
        for page in pages { Self.assertLooksLikeAPage(page) }
        XCTAssertEqual(pages[0].title, "Device login")
        XCTAssertNil(pages[0].alert)
        XCTAssertEqual(pages[1].title, "Device approved")
        XCTAssertTrue(pages[1].text.contains("Your device is signed in as alice. You can return to it."), pages[1].text)
        XCTAssertFalse(code.isEmpty)
        let answer = try agent.answer(to: login, timeout: 30)
        XCTAssertEqual(answer["result"]?["user"]?["preferred_username"], "alice", "\(answer)")
    }

    // MARK: -

    struct Page {
        let name, title, url, text, screenshot: String
        let lang, viewport, alert, username: String?
        let styled: Bool
    }

    private static func assertLooksLikeAPage(_ page: Page, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(page.lang, "en", page.name, file: file, line: line)
        XCTAssertEqual(page.viewport, "width=device-width, initial-scale=1", page.name, file: file, line: line)
        XCTAssertTrue(page.styled, "\(page.name): the inline stylesheet applies", file: file, line: line)
        XCTAssertTrue(FileManager.default.fileExists(atPath: page.screenshot), page.screenshot, file: file, line: line)
    }

    /// Runs browser_drive.py; the screenshots go to `.build/test-artifacts/real-browser/NAME`.
    private func drive(_ python: String, _ mode: String, _ url: String, artifacts name: String, profile: URL) throws -> [Page] {
        let artifacts = Self.root.appendingPathComponent(".build/test-artifacts/real-browser/\(name)")
        try? FileManager.default.removeItem(at: artifacts)
        try FileManager.default.createDirectory(at: artifacts, withIntermediateDirectories: true)
        let script = CLIHarness.scripts.appendingPathComponent("browser_drive.py").path
        // The browser's profile lives in the test's temporary directory, not among the artifacts.
        let work = profile.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let r = try CLIHarness.run(python, [script, mode, url, work.path], directory: work, timeout: 90)
        XCTAssertEqual(r.status, 0, r.stderr)
        let pages = (try JSONParser.parse(r.stdout)["pages"]?.arrayValue ?? []).map { p in
            Page(name: p["name"]?.stringValue ?? "", title: p["title"]?.stringValue ?? "", url: p["url"]?.stringValue ?? "",
                 text: p["text"]?.stringValue ?? "", screenshot: p["screenshot"]?.stringValue ?? "",
                 lang: p["lang"]?.stringValue, viewport: p["viewport"]?.stringValue, alert: p["alert"]?.stringValue,
                 username: p["username"]?.stringValue, styled: p["styled"] == .bool(true))
        }
        // Screenshots are artifacts: moved out of the temporary directory before it goes.
        return pages.map { page in
            let kept = artifacts.appendingPathComponent(URL(fileURLWithPath: page.screenshot).lastPathComponent)
            try? FileManager.default.moveItem(atPath: page.screenshot, toPath: kept.path)
            print("screenshot: \(kept.path)")
            return Page(name: page.name, title: page.title, url: page.url, text: page.text, screenshot: kept.path,
                        lang: page.lang, viewport: page.viewport, alert: page.alert, username: page.username, styled: page.styled)
        }
    }

    /// The python of a venv with Selenium (built once, beside its final path and renamed into
    /// place, so parallel runs never see half of one), after checking for the browser and its driver.
    private static func seleniumPython() throws -> String {
        guard CLIHarness.which("chromium") != nil || CLIHarness.which("chromium-browser") != nil else {
            throw XCTSkip("chromium is not installed (on Debian: apt-get install chromium chromium-driver); .ci/run installs it")
        }
        guard CLIHarness.which("chromedriver") != nil else {
            throw XCTSkip("chromedriver is not installed (on Debian: apt-get install chromium-driver); .ci/run installs it")
        }
        try CLIHarness.requirePython()
        let venv = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("auth-agent-selenium-venv")
        let marker = venv.appendingPathComponent(".requirement")
        let python = venv.appendingPathComponent("bin/python").path
        if (try? String(contentsOf: marker, encoding: .utf8)) == requirement { return python }
        let staging = venv.path + ".staging.\(getpid())"
        defer { try? FileManager.default.removeItem(atPath: staging) }
        guard (try? CLIHarness.run("/usr/bin/env", ["python3", "-m", "venv", staging], timeout: 120).status) == 0 else {
            throw XCTSkip("python3 -m venv is unavailable (on Debian: apt-get install python3-venv)")
        }
        let pip = try CLIHarness.run(staging + "/bin/python", ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", requirement],
                                     timeout: 300)
        guard pip.status == 0 else { throw XCTSkip("pip could not install \(requirement) (no PyPI?): \(pip.stderr.suffix(300))") }
        try requirement.write(toFile: staging + "/.requirement", atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(at: venv)
        // rename(2) refuses a non-empty target: if another run got there first, use theirs.
        _ = rename(staging, venv.path)
        return python
    }
}
