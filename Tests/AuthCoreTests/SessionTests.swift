import XCTest
import AuthCore
import JSON

final class SessionTests: XCTestCase {
    static let full = Session(accessToken: "at-SECRET", tokenType: "Bearer", refreshToken: "rt-SECRET",
                              expiresAt: Date(timeIntervalSince1970: 1_795_327_321), idToken: "id-SECRET",
                              user: ["name": "Ada", "roles": ["admin"]], obtainedAt: Date(timeIntervalSince1970: 1_795_323_721),
                              generation: 7)

    func testRoundTripFull() throws {
        let json = SessionTests.full.toJSON()
        XCTAssertEqual(json["expiresAt"], "2026-11-22T06:02:01Z")
        XCTAssertEqual(json["generation"], .int(7))
        XCTAssertEqual(try Session(json: json), SessionTests.full)
        let reparsed = try JSONParser.parse(JSONSerializer.bytes(json))
        XCTAssertEqual(try Session(json: reparsed), SessionTests.full)
    }

    /// Issue 15: the account and the shaped tokens travel with the session; a shaped token
    /// that could inject header lines makes the record corrupt, like the session's own.
    func testAccountAndShapedTokensRoundTripAndAreChecked() throws {
        var session = SessionTests.full
        session.account = "ada"
        session.shaped = [ShapedToken(shape: TokenShape(scopes: ["write", "read", "read"], resource: "https://api.example.com"),
                                      accessToken: "shaped-SECRET", tokenType: "Bearer", expiresAt: nil, obtainedAt: session.obtainedAt)]
        let json = session.toJSON()
        XCTAssertEqual(json["shaped"]?.arrayValue?.first?["scopes"], ["read", "write"])
        XCTAssertEqual(try Session(json: JSONParser.parse(JSONSerializer.bytes(json))), session)
        XCTAssertFalse(session.description.contains("SECRET"), session.description)
        guard case .object(var record) = json, case .array(var shaped) = record["shaped"], case .object(var token) = shaped[0] else { return XCTFail() }
        token["accessToken"] = "a\r\nX-Evil: 1"
        shaped[0] = .object(token)
        record["shaped"] = .array(shaped)
        XCTAssertThrowsError(try Session(json: .object(record))) { error in
            XCTAssertTrue("\(error)".contains("\"shaped[0]\": \"accessToken\" contains"), "\(error)")
            XCTAssertFalse("\(error)".contains("Evil"))
        }
    }

    func testRoundTripMinimalOmitsAbsentMembers() throws {
        let minimal = Session(accessToken: "a", obtainedAt: Date(timeIntervalSince1970: 0))
        let json = minimal.toJSON()
        XCTAssertEqual(json.objectValue?.keys, ["accessToken", "tokenType", "obtainedAt", "generation"])
        XCTAssertEqual(try Session(json: json), minimal)
        var withNullUser = minimal
        withNullUser.user = .null
        XCTAssertEqual(try Session(json: withNullUser.toJSON()), withNullUser)
    }

    func testNullOptionalsAndUnknownMembersAreAccepted() throws {
        var o = SessionTests.full.toJSON().objectValue!
        o["refreshToken"] = .null
        o["futureField"] = 1
        let session = try Session(json: .object(o))
        XCTAssertNil(session.refreshToken)
    }

    func testMalformedRecordsSayWhatIsWrongWithoutValues() {
        let base = SessionTests.full.toJSON().objectValue!
        let cases: [(JSONValue, String)] = [
            ("nope", "a string, not an object"),
            (.object(base.removing("accessToken")), "\"accessToken\" is missing"),
            (.object(base.setting("accessToken", 5)), "\"accessToken\" is a number, not a string"),
            (.object(base.setting("accessToken", "")), "\"accessToken\" is empty"),
            (.object(base.setting("refreshToken", true)), "\"refreshToken\" is a boolean"),
            (.object(base.setting("expiresAt", "tomorrow")), "\"expiresAt\" is not an RFC 3339 date"),
            (.object(base.removing("obtainedAt")), "\"obtainedAt\" is missing"),
            (.object(base.setting("generation", "7")), "\"generation\" is not a non-negative integer"),
            (.object(base.setting("generation", -1)), "\"generation\" is not a non-negative integer"),
            (.object(base.removing("tokenType")), "\"tokenType\" is missing"),
        ]
        for (json, expected) in cases {
            XCTAssertThrowsError(try Session(json: json)) { error in
                let text = String(describing: error)
                XCTAssertTrue(text.contains(expected), "\(text) should contain \(expected)")
                XCTAssertFalse(text.contains("SECRET"))
            }
        }
    }

    func testDescriptionHidesTokens() {
        var dumped = ""
        dump(SessionTests.full, to: &dumped)
        for text in [String(describing: SessionTests.full), String(reflecting: SessionTests.full), dumped,
                     "\(SessionTests.full)", String(describing: [SessionTests.full])] {
            XCTAssertFalse(text.contains("SECRET"), text)
        }
        XCTAssertTrue(String(describing: SessionTests.full).contains("generation: 7"))
    }
}

extension JSONObject {
    func removing(_ key: String) -> JSONObject {
        var copy = self
        copy[key] = nil
        return copy
    }

    func setting(_ key: String, _ value: JSONValue) -> JSONObject {
        var copy = self
        copy[key] = value
        return copy
    }
}
