import DevIssuer
import Foundation
import JSON
import XCTest

/// The transcript directives that play the user and drive the dev issuer's
/// device and authorization code flows, checked against a dev issuer alone (no
/// agent), so they are known to work before any transcript depends on them.
final class TranscriptDirectiveTests: XCTestCase {
    private var issuer: DevIssuer!
    private var directives: IssuerDirectives!

    override func setUpWithError() throws {
        issuer = DevIssuer()
        try issuer.start()
        directives = IssuerDirectives(issuer: issuer, browserTimeout: 5)
    }

    override func tearDown() {
        issuer.stop()
        issuer = nil
        directives = nil
    }

    func testParsing() throws {
        let text = """
            !issuer slow-down 2
            !issuer device-interval 1
            !issuer expire-devices
            !issuer auto-approve alice
            !issuer auto-approve-off
            !device approve <$code> bob
            !device deny <$code>
            !browser <$url>
            !browser-says You are signed in
            !issuer-answer token.password 200 {"access_token": "a b"}
            !issuer-answer revoke 401
            !issuer wrong-resource
            !issuer-client-metadata agent
            """
        let steps = try Transcript(text: text, file: "t").steps.map { "\($0.step)" }
        XCTAssertEqual(steps, [
            #"issuer("slow-down", 2)"#, #"issuer("device-interval", 1)"#, #"issuer("expire-devices", 0)"#,
            #"issuerAutoApprove(Optional("alice"))"#, "issuerAutoApprove(nil)",
            #"device(capture: "code", approveAs: Optional("bob"))"#, #"device(capture: "code", approveAs: nil)"#,
            #"browser(capture: "url")"#, #"browserSays("You are signed in")"#,
            #"issuerAnswer(endpoint: "token.password", status: 200, body: "{\"access_token\": \"a b\"}")"#,
            #"issuerAnswer(endpoint: "revoke", status: 401, body: "")"#,
            #"issuer("wrong-resource", 0)"#, #"issuerClientMetadata("agent")"#,
        ])
        for bad in ["!device approve code bob", "!device approve <$code>", "!device deny <$code> bob", "!device maybe <$code>",
                    "!browser", "!browser http://x", "!browser-says", "!issuer auto-approve", "!issuer auto-approve a b",
                    "!issuer auto-approve-off alice", "!issuer-answer token", "!issuer-answer token ok {}",
                    "!issuer-client-metadata", "!issuer-client-metadata a b", "!issuer-client-metadata a/b"] {
            XCTAssertThrowsError(try Transcript(text: bad, file: "t"), bad)
        }
    }

    /// `!advance` moves the in-process clock; a transcript about the process plays against the binary.
    func testAdvanceAndWhichAgentPlays() throws {
        let advancing = try Transcript(text: "!advance 2.5\n--> {}", file: "t")
        XCTAssertEqual(advancing.steps.map { "\($0.step)" }, ["advance(2.5)", #"send("{}")"#])
        XCTAssertTrue(advancing.advancesTheClock)
        XCTAssertNil(advancing.processDirective)
        for bad in ["!advance", "!advance soon", "!advance -1"] {
            XCTAssertThrowsError(try Transcript(text: bad, file: "t"), bad)
        }
        for (text, why) in [("!args --max-message-bytes 100", "!args"), ("--> {}\n!close", "!close (line 2)"),
                            ("!exit 2", "!exit (line 1)"), ("!signal TERM", "!signal (line 1)"), ("!send-large 10", "!send-large (line 1)")] {
            XCTAssertEqual(try Transcript(text: text, file: "t").processDirective, why, text)
        }
    }

    func testDeviceApproveAndDeny() throws {
        _ = try perform(.issuer("device-interval", 0))
        let approved = try startDevice()
        XCTAssertTrue(try perform(.device(capture: "code", approveAs: "bob"), ["code": .string(approved.userCode)]))
        XCTAssertEqual(try poll(approved.deviceCode).status, 200)

        let denied = try startDevice()
        _ = try perform(.device(capture: "code", approveAs: nil), ["code": .string(denied.userCode)])
        XCTAssertTrue(try poll(denied.deviceCode).body.contains("access_denied"))

        XCTAssertThrowsError(try perform(.device(capture: "code", approveAs: nil), ["code": .string(denied.userCode)]), "already decided")
        XCTAssertThrowsError(try perform(.device(capture: "code", approveAs: "bob"), [:]), "nothing captured")
        XCTAssertThrowsError(try perform(.device(capture: "code", approveAs: "bob"), ["code": 42]), "not a string")
    }

    /// `!issuer NAME` for each `DiscoveryFault`, `!issuer discovery-faults-off`, `!issuer-client-metadata NAME`.
    func testDiscoveryFaultsAndClientMetadata() throws {
        let metadata = try XCTUnwrap(URL(string: issuer.baseURL + "/.well-known/oauth-authorization-server"))
        func issuerID() throws -> String? {
            try JSONParser.parse(directives.browser.fetch("GET", metadata, form: nil).body)["issuer"]?.stringValue
        }
        XCTAssertTrue(try perform(.issuer("wrong-issuer", 0)))
        XCTAssertEqual(try issuerID(), issuer.baseURL + "/other-issuer")
        XCTAssertTrue(try perform(.issuer("discovery-faults-off", 0)))
        XCTAssertEqual(try issuerID(), issuer.baseURL)
        for fault in DiscoveryFault.allCases { XCTAssertTrue(try perform(.issuer(fault.rawValue, 0)), fault.rawValue) }

        XCTAssertTrue(try perform(.issuerClientMetadata("agent")))
        let document = try directives.browser.fetch("GET", try XCTUnwrap(URL(string: issuer.baseURL + "/clients/agent")), form: nil)
        XCTAssertEqual(try JSONParser.parse(document.body)["client_id"]?.stringValue, issuer.baseURL + "/clients/agent")
    }

    func testSlowDownIntervalAndExpiry() throws {
        _ = try perform(.issuer("device-interval", 0))
        let device = try startDevice()
        _ = try perform(.issuer("slow-down", 1))
        XCTAssertTrue(try poll(device.deviceCode).body.contains("slow_down"))
        _ = try perform(.issuer("expire-devices", 0))
        XCTAssertTrue(try poll(device.deviceCode).body.contains("expired_token"))
        _ = try perform(.issuer("device-interval", 3))
        XCTAssertEqual(try startDevice().interval, 3)
        XCTAssertThrowsError(try perform(.issuer("no-such-action", 0)))
    }

    /// With auto-approve on, `!browser` on an authorization URL follows the
    /// redirect to the loopback redirect URI, here the issuer's own discovery document.
    func testBrowserFollowsTheAuthorizationRedirect() throws {
        _ = try perform(.issuerAutoApprove("alice"))
        let url = authorizeURL(redirectURI: issuer.baseURL + "/.well-known/openid-configuration")
        _ = try perform(.browser(capture: "url"), ["url": .string(url)])
        XCTAssertEqual(directives.browser.trail.count, 2, directives.browser.trail.joined(separator: "\n"))
        XCTAssertTrue(directives.browser.trail[0].hasSuffix("→ 302"))
        _ = try perform(.browserSays("device_authorization_endpoint"))
        XCTAssertThrowsError(try perform(.browserSays("no such text")))
        XCTAssertEqual(issuer.count("authorize"), 1)
        XCTAssertEqual(issuer.count("discovery"), 1)
    }

    func testBrowserFailsOnAFailingHop() throws {
        _ = try perform(.issuerAutoApprove(nil))
        XCTAssertThrowsError(try perform(.browser(capture: "url"), ["url": .string(authorizeURL(redirectURI: "https://example.com/cb"))])) {
            XCTAssertTrue("\($0)".contains("HTTP 400"), "\($0)")
        }
        XCTAssertThrowsError(try perform(.browserSays("anything")), "no page after a failed !browser")
        _ = try perform(.issuerAutoApprove("alice"))
        let deadEnd = authorizeURL(redirectURI: issuer.baseURL + "/nowhere")
        XCTAssertThrowsError(try perform(.browser(capture: "url"), ["url": .string(deadEnd)]), "the last hop's 404 fails the step")
        let closed = authorizeURL(redirectURI: "http://127.0.0.1:1/callback")
        XCTAssertThrowsError(try perform(.browser(capture: "url"), ["url": .string(closed)]), "a hop that cannot connect fails the step")
    }

    // MARK: Helpers

    @discardableResult
    private func perform(_ step: Transcript.Step, _ captures: [String: JSONValue] = [:]) throws -> Bool {
        var captures = captures
        return try directives.perform(step, captures: &captures)
    }

    private func authorizeURL(redirectURI: String) -> String {
        issuer.baseURL + "/authorize?" + Browser.formEncode([
            ("response_type", "code"), ("client_id", "cli"), ("redirect_uri", redirectURI), ("state", "s"),
            ("code_challenge", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"), ("code_challenge_method", "S256"),
        ])
    }

    private func startDevice() throws -> (deviceCode: String, userCode: String, interval: Int64) {
        let response = try directives.browser.fetch("POST", URL(string: issuer.baseURL + "/device_authorization")!, form: [("client_id", "cli")])
        let json = try JSONParser.parse(Array(response.body.utf8))
        return (try XCTUnwrap(json["device_code"]?.stringValue), try XCTUnwrap(json["user_code"]?.stringValue),
                try XCTUnwrap(json["interval"]?.intValue))
    }

    private func poll(_ deviceCode: String) throws -> Browser.Response {
        try directives.browser.fetch("POST", URL(string: issuer.baseURL + "/token")!, form: [
            ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", "cli"), ("device_code", deviceCode),
        ])
    }
}
