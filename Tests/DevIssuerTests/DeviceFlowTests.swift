import DevIssuer
import Foundation
import JSON
import XCTest

/// The device authorization grant (RFC 8628): device codes, polling answers,
/// slow-down and interval growth, expiry, and approval through the page, the API and admin.
final class DeviceFlowTests: IssuerTestCase {
    /// Interval 0, so polls are never early unless a test says so.
    override var options: DevIssuerOptions { DevIssuerOptions(deviceInterval: 0) }

    struct Device {
        let deviceCode: String
        let userCode: String
        let json: JSONValue
    }

    func startDevice(client: String = "cli", scope: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> Device {
        var fields = [("client_id", client)]
        if let scope { fields.append(("scope", scope)) }
        let response = try postForm("/device_authorization", fields)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        let json = try XCTUnwrap(response.json, file: file, line: line)
        return Device(deviceCode: try XCTUnwrap(json["device_code"]?.stringValue, file: file, line: line),
                      userCode: try XCTUnwrap(json["user_code"]?.stringValue, file: file, line: line), json: json)
    }

    func poll(_ device: Device, client: String = "cli") throws -> TestResponse {
        try token([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", client), ("device_code", device.deviceCode)])
    }

    func testDeviceAuthorizationResponse() throws {
        issuer.setDeviceInterval(7)
        let device = try startDevice()
        XCTAssertNotNil(device.userCode.range(of: "^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$", options: .regularExpression),
                        device.userCode)
        XCTAssertEqual(device.json["verification_uri"]?.stringValue, issuer.baseURL + "/device")
        XCTAssertEqual(device.json["verification_uri_complete"]?.stringValue, issuer.baseURL + "/device?user_code=" + device.userCode)
        XCTAssertEqual(device.json["expires_in"], 600)
        XCTAssertEqual(device.json["interval"], 7)
        XCTAssertGreaterThanOrEqual(device.deviceCode.count, 40)
        XCTAssertEqual(issuer.count("deviceAuthorization"), 1)

        let unknown = try postForm("/device_authorization", [("client_id", "nobody")])
        XCTAssertEqual(unknown.status, 401)
        XCTAssertEqual(unknown.json?["error"], "invalid_client")
        let badSecret = try postForm("/device_authorization", [("client_id", "svc"), ("client_secret", "wrong")])
        XCTAssertEqual(badSecret.json?["error"], "invalid_client")
        let confidential = try postForm("/device_authorization", [], basic: ("svc", "svc-secret"))
        XCTAssertEqual(confidential.status, 200, confidential.text)
    }

    func testPendingUntilApprovedThenTokensOnce() throws {
        let device = try startDevice(scope: "openid profile")
        let pending = try poll(device)
        XCTAssertEqual(pending.status, 400)
        XCTAssertEqual(pending.json?["error"], "authorization_pending")
        XCTAssertEqual(pending.header("Cache-Control"), "no-store")

        XCTAssertTrue(issuer.approveDevice(userCode: device.userCode.lowercased(), username: "bob"), "user codes are case-insensitive")
        let granted = try poll(device)
        XCTAssertEqual(granted.status, 200, granted.text)
        XCTAssertNotNil(granted.json?["refresh_token"]?.stringValue)
        XCTAssertEqual(granted.json?["scope"], "openid profile")
        let idToken = try XCTUnwrap(granted.json?["id_token"]?.stringValue)
        XCTAssertEqual(jwtClaims(idToken)?["sub"], "bob")
        let access = try XCTUnwrap(granted.json?["access_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access).json?["sub"], "bob")

        let again = try poll(device)
        XCTAssertEqual(again.json?["error"], "invalid_grant", "a device code is good for one set of tokens")
        XCTAssertFalse(issuer.approveDevice(userCode: device.userCode, username: "bob"), "already decided")
        XCTAssertEqual(issuer.count("token.device_code"), 3)
        XCTAssertEqual(issuer.count("token"), 3)
    }

    func testWrongClientOrUnknownCodeIsInvalidGrant() throws {
        let device = try startDevice()
        XCTAssertEqual(try poll(device, client: "demo").json?["error"], "invalid_grant")
        let unknown = try token([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", "cli"), ("device_code", "nope")])
        XCTAssertEqual(unknown.json?["error"], "invalid_grant")
        let missing = try token([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", "cli")])
        XCTAssertEqual(missing.json?["error"], "invalid_request")
    }

    func testPollingTooFastSlowsDownAndTheIntervalGrows() throws {
        issuer.setDeviceInterval(1)
        let device = try startDevice()
        XCTAssertEqual(device.json["interval"], 1)
        XCTAssertEqual(try poll(device).json?["error"], "authorization_pending", "the first poll has nothing to be early for")
        XCTAssertEqual(try poll(device).json?["error"], "slow_down")
        // The interval is now 6 s: waiting the original 1 s is still too fast.
        Thread.sleep(forTimeInterval: 1.1)
        XCTAssertEqual(try poll(device).json?["error"], "slow_down", "slow_down adds 5 s to the interval for good")

        let patient = try startDevice()
        XCTAssertEqual(try poll(patient).json?["error"], "authorization_pending")
        Thread.sleep(forTimeInterval: 1.0)
        XCTAssertEqual(try poll(patient).json?["error"], "authorization_pending", "a poll after the interval is on time")
    }

    func testForcedSlowDown() throws {
        let device = try startDevice()
        issuer.forceSlowDown(2)
        XCTAssertEqual(try poll(device).json?["error"], "slow_down")
        XCTAssertEqual(try poll(device).json?["error"], "slow_down")
        let other = try startDevice()
        XCTAssertEqual(try poll(other).json?["error"], "authorization_pending", "only the next two polls are forced")
    }

    func testDeniedAnswersAccessDenied() throws {
        let device = try startDevice()
        XCTAssertTrue(issuer.denyDevice(userCode: device.userCode))
        XCTAssertEqual(try poll(device).json?["error"], "access_denied")
        XCTAssertEqual(try poll(device).json?["error"], "access_denied")
        XCTAssertFalse(issuer.denyDevice(userCode: device.userCode))
        XCTAssertFalse(issuer.denyDevice(userCode: "BCDF-GHJK"))
    }

    func testExpireDeviceCodes() throws {
        let device = try startDevice()
        issuer.expireDeviceCodes()
        XCTAssertEqual(try poll(device).json?["error"], "expired_token")
        XCTAssertFalse(issuer.approveDevice(userCode: device.userCode, username: "alice"), "an expired code cannot be approved")
        let fresh = try startDevice()
        XCTAssertEqual(try poll(fresh).json?["error"], "authorization_pending", "codes issued later are unaffected")
    }

    func testApprovedThroughTheHTMLForm() throws {
        let device = try startDevice()
        let page = try get("/device?user_code=" + device.userCode)
        XCTAssertEqual(page.status, 200)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        XCTAssertTrue(page.text.contains("value=\"\(device.userCode)\""), page.text)
        XCTAssertTrue(page.text.contains("name=\"password\""))
        XCTAssertTrue(page.text.contains("value=\"approve\"") && page.text.contains("value=\"deny\""))

        let badPassword = try postForm("/device", [("user_code", device.userCode), ("username", "alice"), ("password", "x"), ("action", "approve")])
        XCTAssertEqual(badPassword.status, 200)
        XCTAssertTrue(badPassword.text.contains("Invalid username or password"), badPassword.text)
        XCTAssertEqual(try poll(device).json?["error"], "authorization_pending")

        let approved = try postForm("/device", [("user_code", device.userCode.replacingOccurrences(of: "-", with: "")),
                                                ("username", "alice"), ("password", "wonderland"), ("action", "approve")])
        XCTAssertEqual(approved.status, 200, approved.text)
        XCTAssertTrue(approved.text.contains("Device approved"), approved.text)
        let granted = try poll(device)
        XCTAssertEqual(granted.status, 200, granted.text)
        let access = try XCTUnwrap(granted.json?["access_token"]?.stringValue)
        XCTAssertEqual(try get("/userinfo", bearer: access).json?["sub"], "alice")

        let reused = try postForm("/device", [("user_code", device.userCode), ("username", "alice"), ("password", "wonderland"), ("action", "approve")])
        XCTAssertEqual(reused.status, 400)
        XCTAssertEqual(issuer.count("device"), 4)
    }

    func testDeniedThroughTheHTMLForm() throws {
        let device = try startDevice()
        let denied = try postForm("/device", [("user_code", device.userCode), ("username", "bob"), ("password", "builder"), ("action", "deny")])
        XCTAssertEqual(denied.status, 200, denied.text)
        XCTAssertTrue(denied.text.contains("Device denied"))
        XCTAssertEqual(try poll(device).json?["error"], "access_denied")
    }

    func testVerificationPageEscapesWhatItEchoes() throws {
        let page = try get("/device?user_code=%22%3E%3Cscript%3Ex%3C%2Fscript%3E")
        XCTAssertEqual(page.status, 200)
        XCTAssertFalse(page.text.contains("<script>"), page.text)
        XCTAssertTrue(page.text.contains("&quot;&gt;&lt;script&gt;"), page.text)
    }

    func testAdminDecidesDevices() throws {
        let device = try startDevice()
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": .string(device.userCode), "action": "approve"]).status, 400, "approve needs a username")
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": .string(device.userCode), "action": "approve", "username": "nobody"]).status, 404)
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": .string(device.userCode), "action": "approve", "username": "bob"]).status, 200)
        XCTAssertEqual(try poll(device).status, 200)
        let second = try startDevice()
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": .string(second.userCode), "action": "deny"]).status, 200)
        XCTAssertEqual(try poll(second).json?["error"], "access_denied")
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": .string(second.userCode), "action": "deny"]).status, 404)
        XCTAssertEqual(try postJSON("/_admin/device", ["userCode": "x", "action": "maybe"]).status, 400)
    }

    func testAdminFaultDrivesTheDeviceKnobs() throws {
        XCTAssertEqual(try postJSON("/_admin/fault", ["deviceInterval": 3, "slowDown": 1]).status, 200)
        let device = try startDevice()
        XCTAssertEqual(device.json["interval"], 3)
        XCTAssertEqual(try poll(device).json?["error"], "slow_down")
        XCTAssertEqual(try postJSON("/_admin/fault", ["expireDevices": true]).status, 200)
        XCTAssertEqual(try poll(device).json?["error"], "expired_token")
        XCTAssertEqual(try postJSON("/_admin/fault", ["autoApprove": 3]).status, 400)
        XCTAssertEqual(try postJSON("/_admin/reset", [:]).status, 200)
        XCTAssertEqual(try startDevice().json["interval"], 0, "reset restores the configured interval")
    }
}

/// Device codes issued with a zero lifetime are expired on the first poll.
final class DeviceExpiryTests: IssuerTestCase {
    override var options: DevIssuerOptions { DevIssuerOptions(deviceCodeLifetime: 0) }

    func testExpiredOnFirstPoll() throws {
        let response = try postForm("/device_authorization", [("client_id", "cli")])
        let deviceCode = try XCTUnwrap(response.json?["device_code"]?.stringValue)
        XCTAssertEqual(response.json?["expires_in"], 0)
        let poll = try token([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", "cli"), ("device_code", deviceCode)])
        XCTAssertEqual(poll.json?["error"], "expired_token")
    }
}
