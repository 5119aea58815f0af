@testable import auth_agent
import AuthCore
import DevIssuer
import Foundation
import JSON
import XCTest

/// The interactive login's prompt as a person sees it: a countdown to the code's expiry that
/// rewrites one line on a terminal (said once otherwise), and `Press Enter to open the browser`
/// where there is a display. Driven on a pseudo-terminal (Tests/CLI/pty_drive.py).
final class LoginPromptTests: XCTestCase {
    private static let rewrite = "\r\u{1B}[K"

    func testDeviceCodeCountsDownOnOneLineOfTheTerminal() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let log = h.directory.appendingPathComponent("pty.log")
        let approver = Thread { Self.approve(h, log: log, after: 2.5) }
        approver.start()
        let output = try drive(h, ["login", "device"], environment: ["PTY_LOG": log.path, "DISPLAY": "", "WAYLAND_DISPLAY": ""])
        XCTAssertTrue(output.contains("Logged in to Device Login"), output)
        let shown = Set(Self.matches(#"\r\x{1B}\[KThe code expires in (\d+:\d\d)\."#, in: output))
        XCTAssertGreaterThanOrEqual(shown.count, 2, "the line is rewritten with the time left at least once a second: \(output.debugDescription)")
        XCTAssertFalse(output.contains("Press Enter"), "no display, no browser to open: \(output)")
        XCTAssertTrue(output.contains(Self.rewrite + "Logged in"), "the line is cleared before what follows: \(output.debugDescription)")
    }

    /// Issue 31 item 4: a log line written while the countdown shows (here the requests logged at
    /// `--log-level debug`, the device code's polls among them) clears the countdown line first and
    /// takes its place; the countdown is drawn again below it. None lands at the end of the countdown.
    func testLogLinesNeverLandOnTheCountdownLine() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let log = h.directory.appendingPathComponent("pty.log")
        let approver = Thread { Self.approve(h, log: log, after: 2.5) }
        approver.start()
        let output = try drive(h, ["login", "device", "--log-level", "debug"], environment: ["PTY_LOG": log.path, "DISPLAY": "", "WAYLAND_DISPLAY": ""])
        XCTAssertTrue(output.contains("Logged in to Device Login"), output)
        let starts = output.ranges(of: "auth-agent: debug:").map(\.lowerBound)
        let duringCountdown = starts.filter { output[..<$0].contains("The code expires in") && !output[..<$0].contains("Logged in") }
        XCTAssertFalse(duringCountdown.isEmpty, "requests were logged while the countdown showed: \(output.debugDescription)")
        for start in starts {
            let before = output[..<start]
            // (The pty writes a newline as \r\n, one Character: compared by scalars.)
            XCTAssertTrue(before.isEmpty || before.unicodeScalars.last == "\n" || before.hasSuffix(Self.rewrite),
                          "a log line starts a line of its own: \(before.suffix(60).debugDescription)")
        }
        let after = output[duringCountdown.first!...]
        XCTAssertTrue(after.contains(Self.rewrite + "The code expires in"), "the countdown is drawn again below: \(after.debugDescription)")
    }

    func testEnterOpensTheBrowserWhereThereIsADisplay() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let bin = h.directory.appendingPathComponent("bin")
        let opened = h.directory.appendingPathComponent("opened")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        // The opener the agent runs (xdg-open; `open` on macOS) records the URL it was given.
        for name in ["xdg-open", "open"] {
            let opener = bin.appendingPathComponent(name)
            try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(opened.path)'\n".write(to: opener, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        }
        let log = h.directory.appendingPathComponent("pty.log")
        let approver = Thread {
            for _ in 0..<400 where !FileManager.default.fileExists(atPath: opened.path) { usleep(50_000) }
            Self.approve(h, log: log, after: 0)
        }
        approver.start()
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let output = try drive(h, ["login", "device"], steps: [["expect": "Press Enter to open the browser", "send": "\n"]],
                               environment: ["PTY_LOG": log.path, "DISPLAY": ":99", "PATH": path])
        XCTAssertTrue(output.contains("Logged in to Device Login"), output)
        XCTAssertTrue(output.contains("Opened the browser; the code expires in"), output.debugDescription)
        let urls = try String(contentsOf: opened, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(urls.count, 1, "opened once: \(urls)")
        XCTAssertTrue(urls.first?.hasPrefix(h.issuer.baseURL + "/device?user_code=") == true, "the URL that needs no typing: \(urls)")
    }

    /// A browser login: Enter hands the authorization URL to the opener, whose "browser" (curl,
    /// the issuer approving at once) follows it back to the agent, and the login ends.
    func testEnterOpensTheAuthorizationURLOfABrowserLogin() throws {
        try CLIHarness.requirePython()
        guard CLIHarness.which("curl") != nil else { throw XCTSkip("curl is not installed") }
        let h = try CLIHarness()
        h.issuer.setAutoApprove(username: "alice")
        let config = h.directory.appendingPathComponent("web.json")
        let web: JSONValue = [
            "store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(h.issuer.baseURL), "clientId": "cli"]],
        ]
        try Data(JSONSerializer.bytes(web)).write(to: config)
        let bin = h.directory.appendingPathComponent("bin")
        let page = h.directory.appendingPathComponent("page.html")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for name in ["xdg-open", "open"] {
            let opener = bin.appendingPathComponent(name)
            try "#!/bin/sh\nexec curl -sfL -o '\(page.path)' \"$1\"\n".write(to: opener, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        }
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let output = try drive(h, ["login", "web"], steps: [["expect": "Press Enter to open the browser; the login waits", "send": "\n"]],
                               environment: ["AUTH_AGENT_CONFIG": config.path, "DISPLAY": ":99", "PATH": path])
        XCTAssertTrue(output.contains("open this URL in a browser"), output)
        XCTAssertTrue(output.contains("Logged in to Web SSO as alice"), output.debugDescription)
        XCTAssertTrue(try String(contentsOf: page, encoding: .utf8).contains("You are signed in to Web SSO"))
    }

    /// Over SSH without a display: the opener is never run (no `Press Enter` either); the person
    /// pastes the redirect URL the browser (elsewhere) ended at — first one with another login's
    /// state, refused while the login keeps waiting, then the right one, which finishes it.
    func testPasteBackOnTheTerminalOverSSHWithoutADisplay() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness()
        let web: JSONValue = [
            "store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)],
            "providers": [["id": "web", "displayName": "Web SSO", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(h.issuer.baseURL), "clientId": "cli", "openBrowser": true]],
        ]
        try pasteBack(h, config: web, arguments: ["login", "web"], loggedIn: "Logged in to Web SSO as alice")
    }

    /// `login URL --browser` learns the API and takes the redirect pasted back the same way (without
    /// `--browser` a learned API that offers the device flow uses it over SSH without a display).
    func testPasteBackOfALoginThatLearnsTheAPI() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness()
        let empty: JSONValue = ["store": ["kind": "file", "path": .string(h.directory.appendingPathComponent("store").path)], "openBrowser": true]
        let resource = h.issuer.baseURL + "/mcp"
        try pasteBack(h, config: empty, arguments: ["login", resource, "--browser"], loggedIn: "Logged in to \(resource)")
    }

    /// Over SSH without a display: the browser on the other machine follows the login up to the redirect it
    /// cannot reach; a forged `state` pasted first is refused and the login waits, the real one finishes it,
    /// and the opener never runs.
    private func pasteBack(_ h: CLIHarness, config body: JSONValue, arguments: [String], loggedIn: String) throws {
        h.issuer.setAutoApprove(username: "alice")
        let config = h.directory.appendingPathComponent("web.json")
        try Data(JSONSerializer.bytes(body)).write(to: config)
        let bin = h.directory.appendingPathComponent("bin")
        let opened = h.directory.appendingPathComponent("opened")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        for name in ["xdg-open", "open"] {
            let opener = bin.appendingPathComponent(name)
            try "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '\(opened.path)'\n".write(to: opener, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: opener.path)
        }
        let log = h.directory.appendingPathComponent("pty.log")
        let (forged, good) = (h.directory.appendingPathComponent("forged"), h.directory.appendingPathComponent("good"))
        let browser = Thread {
            for _ in 0..<400 {
                if let text = try? String(contentsOf: log, encoding: .utf8), let range = text.range(of: "open this URL in a browser:\r\n  ") {
                    let url = String(text[range.upperBound...].prefix { !$0.isWhitespace })
                    let stop = { (next: URL) in next.host == "127.0.0.1" && next.path == "/callback" }
                    if let last = try? Browser().navigate(url, stopAt: stop), let redirect = last.location {
                        let wrong = redirect.replacingOccurrences(of: "state=", with: "state=forged")
                        try? (wrong + "\n").write(to: forged, atomically: true, encoding: .utf8)
                        try? (redirect + "\n").write(to: good, atomically: true, encoding: .utf8)
                    }
                    return
                }
                usleep(50_000)
            }
        }
        browser.start()
        let path = bin.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let output = try drive(h, arguments, steps: [["expect": "login waits", "sendFile": .string(forged.path)],
                                                     ["expect": "was not taken", "sendFile": .string(good.path)]],
                               environment: ["AUTH_AGENT_CONFIG": config.path, "PTY_LOG": log.path, "SSH_CONNECTION": "10.0.0.2 50000 10.0.0.1 22",
                                             "DISPLAY": "", "WAYLAND_DISPLAY": "", "PATH": path])
        XCTAssertTrue(output.contains("paste here the whole address it ends at"), output)
        XCTAssertTrue(output.contains("That URL was not taken: the redirect URL's state does not match the login's"), output.debugDescription)
        XCTAssertTrue(output.contains(loggedIn), output.debugDescription)
        XCTAssertFalse(output.contains("Press Enter"), "no browser to open over SSH without a display: \(output)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: opened.path), "the opener never ran")
    }

    /// stderr to a file (a log): the prompt and the expiry, once, without terminal control sequences.
    func testExpiryIsSaidOnceWhenStderrIsNotATerminal() throws {
        try CLIHarness.requirePython()
        let h = try CLIHarness(issuerOptions: DevIssuerOptions(deviceInterval: 1))
        let log = h.directory.appendingPathComponent("pty.log")
        let errors = h.directory.appendingPathComponent("stderr")
        let approver = Thread { Self.approve(h, log: log, after: 1.5) }
        approver.start()
        _ = try drive(h, [], environment: ["PTY_LOG": log.path, "ERRORS": errors.path], shell: #"exec "$AGENT" login device 2>"$ERRORS""#)
        let text = try String(contentsOf: errors, encoding: .utf8)
        XCTAssertEqual(Self.matches(#"The code expires at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in (\d+:\d\d)\)\."#, in: text).count, 1, text)
        XCTAssertFalse(text.contains("\u{1B}"), text.debugDescription)
    }

    func testCountdownText() {
        XCTAssertEqual(LivePromptLine.clock(599.2), "10:00")
        XCTAssertEqual(LivePromptLine.clock(59), "0:59")
        XCTAssertEqual(LivePromptLine.clock(0.1), "0:01")
        XCTAssertEqual(LivePromptLine.clock(-3), "0:00")
        XCTAssertEqual(LivePromptLine.clock(3723), "1:02:03")
        let now = Date(timeIntervalSince1970: 1_000_000)
        let device = LoginPrompt.deviceCode(userCode: "A-B", verificationURI: "https://x/device", verificationURIComplete: nil, expiresAt: now + 90)
        let browser = LoginPrompt.browser(url: "https://x/authorize", expiresAt: now + 300)
        XCTAssertEqual(LivePromptLine.text(device, now: now, offer: false), "The code expires in 1:30.")
        XCTAssertEqual(LivePromptLine.text(browser, now: now, offer: true), "Press Enter to open the browser; the login waits 5:00 more.")
        XCTAssertEqual(LivePromptLine.text(device, now: now + 91, offer: true, opened: true), "Opened the browser; the code has expired.")
        #if !os(macOS)
        XCTAssertFalse(LivePromptLine.canOpenBrowser(["DISPLAY": ""]))
        XCTAssertTrue(LivePromptLine.canOpenBrowser(["DISPLAY": ":0"]))
        XCTAssertTrue(LivePromptLine.canOpenBrowser(["WAYLAND_DISPLAY": "wayland-0"]))
        #endif
        XCTAssertEqual(LivePromptLine.url(of: device), "https://x/device")
        XCTAssertEqual(LivePromptLine.onceText(device, now: now), "The code expires at 1970-01-12T13:48:10Z (in 1:30).")
    }

    // MARK: -

    private func drive(_ h: CLIHarness, _ arguments: [String], steps: JSONValue = [], environment: [String: String] = [:], shell: String? = nil) throws -> String {
        let screen = try onTerminal(h, arguments, steps: steps, environment: environment, shell: shell)
        XCTAssertEqual(screen.status, 0, screen.output)
        return screen.output
    }

    /// Approves the device code the terminal shows, `delay` seconds after it appeared.
    private static func approve(_ h: CLIHarness, log: URL, after delay: Double) {
        for _ in 0..<400 {
            if let text = try? String(contentsOf: log, encoding: .utf8), let range = text.range(of: "enter the code ") {
                let code = text[range.upperBound...].prefix { !$0.isWhitespace }
                if !code.isEmpty {
                    usleep(UInt32(delay * 1_000_000))
                    if h.issuer.approveDevice(userCode: String(code), username: "alice") { return }
                }
            }
            usleep(50_000)
        }
    }

    private static func matches(_ pattern: String, in text: String) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let ns = text as NSString
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).map {
            $0.numberOfRanges > 1 ? ns.substring(with: $0.range(at: 1)) : ns.substring(with: $0.range)
        }
    }
}
