import DevIssuer
import JSON
import XCTest

/// The issuer's two users, as every flow presents them: each has its own stable `sub`
/// (the username), session-API id, name and email, so a client can hold both at once.
final class UsersTests: IssuerTestCase {
    override var options: DevIssuerOptions { DevIssuerOptions(deviceInterval: 0) }

    static let claims: [String: JSONValue] = [
        "alice": ["sub": "alice", "name": "Alice", "email": "alice@example.com", "preferred_username": "alice"],
        "bob": ["sub": "bob", "name": "Bob", "email": "bob@example.com", "preferred_username": "bob"],
    ]

    private func userinfo(_ response: TestResponse) throws -> JSONValue? {
        XCTAssertEqual(response.status, 200, response.text)
        return try get("/userinfo", bearer: try XCTUnwrap(response.json?["access_token"]?.stringValue)).json
    }

    func testPasswordGrantForEachUser() throws {
        for (username, password) in [("alice", "wonderland"), ("bob", "builder")] {
            let response = try token([("grant_type", "password"), ("client_id", "cli"), ("username", username), ("password", password),
                                      ("scope", "openid")])
            XCTAssertEqual(try userinfo(response), Self.claims[username])
            let idToken = try XCTUnwrap(jwtClaims(try XCTUnwrap(response.json?["id_token"]?.stringValue)))
            for (key, value) in try XCTUnwrap(Self.claims[username]?.objectValue).members {
                XCTAssertEqual(idToken[key], value, "\(username) \(key)")
            }
        }
    }

    func testSessionAPIForEachUser() throws {
        XCTAssertEqual(try sessionLogin("alice", "wonderland").json?["user"], ["id": "1", "username": "alice", "name": "Alice"])
        let bob = try sessionLogin("bob", "builder")
        XCTAssertEqual(bob.json?["user"], ["id": "2", "username": "bob", "name": "Bob"])
        let jwt = try XCTUnwrap(bob.json?["jwt"]?.stringValue)
        XCTAssertEqual(jwtClaims(jwt)?["sub"], "bob")
        XCTAssertEqual(try get("/api/me", bearer: jwt).json, Self.claims["bob"])
    }

    /// Two device logins at once, approved by different users, get tokens for each.
    func testDeviceLoginsApprovedByEachUser() throws {
        var subjects: [String] = []
        var pending: [(String, String)] = []
        for username in ["bob", "alice"] {
            let started = try postForm("/device_authorization", [("client_id", "cli")])
            pending.append((try XCTUnwrap(started.json?["device_code"]?.stringValue), username))
            XCTAssertTrue(issuer.approveDevice(userCode: try XCTUnwrap(started.json?["user_code"]?.stringValue), username: username))
        }
        for (deviceCode, _) in pending {
            let tokens = try token([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("client_id", "cli"), ("device_code", deviceCode)])
            subjects.append(try XCTUnwrap(try userinfo(tokens)?["sub"]?.stringValue))
        }
        XCTAssertEqual(subjects, pending.map(\.1))
    }
}
