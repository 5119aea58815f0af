import XCTest
import AuthCore
import JSON
import Wire

final class JWTTests: XCTestCase {
    // {"alg": "none"} . {"sub": "u1", "exp": 1795327321, "name": "Ada"} (encoded by another implementation)
    private let token = "eyJhbGciOiAibm9uZSJ9.eyJzdWIiOiAidTEiLCAiZXhwIjogMTc5NTMyNzMyMSwgIm5hbWUiOiAiQWRhIn0.c2ln"

    func testClaims() throws {
        let claims = try XCTUnwrap(JWT.claims(of: token))
        XCTAssertEqual(claims["sub"], "u1")
        XCTAssertEqual(claims["name"], "Ada")
        XCTAssertEqual(claims["exp"], .int(1_795_327_321))
    }

    func testExpiry() {
        XCTAssertEqual(JWT.expiry(of: token), Date(timeIntervalSince1970: 1_795_327_321))
        XCTAssertEqual(RFC3339.format(JWT.expiry(of: token)!), "2026-11-22T06:02:01Z")
        XCTAssertEqual(JWT.expiry(of: make(["exp": .double(1.5e9)])), Date(timeIntervalSince1970: 1.5e9))
        XCTAssertNil(JWT.expiry(of: make(["exp": "1795327321"])))
        XCTAssertNil(JWT.expiry(of: make(["sub": "x"])))
        XCTAssertNil(JWT.expiry(of: make(["exp": -5])))
    }

    func testRejectsNonJWS() {
        let payload = Base64URL.encode(Array(#"{"a":1}"#.utf8))
        for bad in ["", "a.b", "a..c", "x.!!!.y", "h.\(payload).s.e.x", "h.\(Base64URL.encode(Array("[1]".utf8))).s",
                    "h.\(Base64URL.encode(Array("{".utf8))).s", "opaque-token"] {
            XCTAssertNil(JWT.claims(of: bad), bad)
        }
        XCTAssertNotNil(JWT.claims(of: "h.\(payload)."), "an unsigned token still has readable claims")
    }

    private func make(_ claims: JSONObject) -> String {
        "e30.\(Base64URL.encode(JSONSerializer.bytes(.object(claims)))).sig"
    }
}
