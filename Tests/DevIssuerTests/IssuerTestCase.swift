import DevIssuer
import Foundation
import JSON
import XCTest

/// Starts a fresh issuer on an ephemeral port per test and offers one-line requests.
class IssuerTestCase: XCTestCase {
    var issuer: DevIssuer!
    var port: UInt16 = 0

    /// Overridden by tests that need non-default options.
    var options: DevIssuerOptions { DevIssuerOptions() }

    override func setUpWithError() throws {
        issuer = DevIssuer(options: options)
        port = try issuer.start()
    }

    override func tearDown() {
        issuer.stop()
        issuer = nil
    }

    /// One request on a fresh connection.
    func send(_ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> TestResponse {
        let connection = try TestConnection(port: port)
        return try connection.request(method, path, headers: headers + [("Connection", "close")], body: body)
    }

    func postJSON(_ path: String, _ value: JSONValue, bearer: String? = nil) throws -> TestResponse {
        var headers = [("Content-Type", "application/json")]
        if let bearer { headers.append(("Authorization", "Bearer \(bearer)")) }
        return try send("POST", path, headers: headers, body: JSONSerializer.bytes(value))
    }

    func postBearer(_ path: String, _ token: String) throws -> TestResponse {
        try send("POST", path, headers: [("Authorization", "Bearer \(token)")])
    }

    func get(_ path: String, bearer: String? = nil) throws -> TestResponse {
        try send("GET", path, headers: bearer.map { [("Authorization", "Bearer \($0)")] } ?? [])
    }

    /// A form POST; `basic` sends client_secret_basic credentials, encoded per RFC 6749 §2.3.1.
    func postForm(_ path: String, _ fields: [(String, String)], basic: (id: String, secret: String)? = nil) throws -> TestResponse {
        var headers = [("Content-Type", "application/x-www-form-urlencoded")]
        if let basic {
            let credentials = "\(formEncode(basic.id)):\(formEncode(basic.secret))"
            headers.append(("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString()))
        }
        let body = fields.map { "\(formEncode($0.0))=\(formEncode($0.1))" }.joined(separator: "&")
        return try send("POST", path, headers: headers, body: Array(body.utf8))
    }

    func token(_ fields: [(String, String)], basic: (id: String, secret: String)? = nil) throws -> TestResponse {
        try postForm("/token", fields, basic: basic)
    }

    /// Password grant for alice with the public `cli` client; fails the test unless it succeeds.
    func passwordGrant(scope: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws -> (access: String, refresh: String) {
        var fields = [("grant_type", "password"), ("client_id", "cli"), ("username", "alice"), ("password", "wonderland")]
        if let scope { fields.append(("scope", scope)) }
        let response = try token(fields)
        XCTAssertEqual(response.status, 200, response.text, file: file, line: line)
        let access = try XCTUnwrap(response.json?["access_token"]?.stringValue, file: file, line: line)
        let refresh = try XCTUnwrap(response.json?["refresh_token"]?.stringValue, file: file, line: line)
        return (access, refresh)
    }

    func refreshGrant(_ refreshToken: String, client: String = "cli") throws -> TestResponse {
        try token([("grant_type", "refresh_token"), ("client_id", client), ("refresh_token", refreshToken)])
    }

    func sessionLogin(_ username: String = "alice", _ password: String = "wonderland") throws -> TestResponse {
        try postJSON("/sessions", ["session": ["username": .string(username), "password": .string(password)]])
    }
}

func formEncode(_ text: String) -> String {
    var allowed = CharacterSet.alphanumerics
    allowed.insert(charactersIn: "-._~")
    return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
}

/// The payload of a JWT-shaped token, decoded without verification.
func jwtSegments(_ token: String) -> [JSONValue?] {
    token.split(separator: ".", omittingEmptySubsequences: false).prefix(2).map { segment in
        var base64 = segment.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).flatMap { try? JSONParser.parse([UInt8]($0)) }
    }
}

func jwtClaims(_ token: String) -> JSONValue? {
    let segments = jwtSegments(token)
    return segments.count == 2 ? segments[1] : nil
}

func jwtHeader(_ token: String) -> JSONValue? {
    let segments = jwtSegments(token)
    return segments.count == 2 ? segments[0] : nil
}
