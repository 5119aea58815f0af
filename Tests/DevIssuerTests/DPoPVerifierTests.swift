import DevIssuer
import Digest
import ES256
import JSON
import Wire
import XCTest

/// The dev issuer's DPoP verifier on proofs built here by hand (not by the agent's
/// builder), so each rule of RFC 9449 §4.3 is seen refusing what breaks it.
final class DPoPVerifierTests: XCTestCase {
    private let key = try! P256Key.generate()
    private let url = "http://127.0.0.1:8080/api/me"
    private let now = 1_800_000_000.5

    private func proof(header: [String: JSONValue]? = nil, claims: [String: JSONValue]? = nil, signer: P256Key? = nil) throws -> String {
        let jwk = try JSONParser.parse(Array(key.publicJWK.utf8))
        var h: JSONObject = ["typ": "dpop+jwt", "alg": "ES256", "jwk": jwk]
        for (k, v) in header ?? [:] { h[k] = v }
        var c: JSONObject = ["jti": "j-1", "htm": "GET", "htu": .string(url), "iat": .int(1_800_000_000),
                             "ath": .string(Base64URL.encode(SHA256.hash("tok")))]
        for (k, v) in claims ?? [:] { c[k] = v.isNull ? nil : v }
        let input = Base64URL.encode(JSONSerializer.bytes(.object(h))) + "." + Base64URL.encode(JSONSerializer.bytes(.object(c)))
        return input + "." + Base64URL.encode(try (signer ?? key).sign(Array(input.utf8)))
    }

    private func refusal(_ proof: String, method: String = "GET", token: String? = "tok") -> String? {
        switch DPoPVerifier.verify(proof, method: method, url: url + "?page=2", accessToken: token, now: now) {
        case .success: return nil
        case .failure(let why): return why.description
        }
    }

    func testAValidProofGivesTheThumbprintOfItsKey() throws {
        guard case .success(let p) = DPoPVerifier.verify(try proof(), method: "GET", url: url, accessToken: "tok", now: now) else {
            return XCTFail("refused")
        }
        XCTAssertEqual(p.jkt, key.thumbprint)
        XCTAssertEqual(p.jti, "j-1")
    }

    func testEachRuleRefuses() throws {
        XCTAssertEqual(refusal(try proof(header: ["typ": "JWT"])), "typ is not dpop+jwt")
        XCTAssertEqual(refusal(try proof(header: ["alg": "RS256"])), "alg is not ES256")
        XCTAssertEqual(refusal(try proof(signer: try P256Key.generate())), "the signature does not verify")
        XCTAssertEqual(refusal(try proof(), method: "POST"), "htm is not POST")
        XCTAssertEqual(refusal(try proof(claims: ["htu": "http://127.0.0.1:8080/api/other"])), "htu is not \(url)")
        XCTAssertEqual(refusal(try proof(claims: ["iat": .int(1_800_000_006)])), "iat is in the future")
        XCTAssertEqual(refusal(try proof(claims: ["iat": .int(1_799_999_900)])), "iat is too old")
        XCTAssertEqual(refusal(try proof(claims: ["ath": "x"])), "ath does not match the access token")
        XCTAssertEqual(refusal(try proof(claims: ["jti": .null])), "jti is missing")
        XCTAssertNil(refusal(try proof(claims: ["ath": .null]), token: nil), "no ath at the token endpoint")
        XCTAssertEqual(refusal("a.b"), "not a JWS in compact form")
        var withPrivate = try JSONParser.parse(Array(key.publicJWK.utf8)).objectValue!
        withPrivate["d"] = "AAAA"
        XCTAssertEqual(refusal(try proof(header: ["jwk": .object(withPrivate)])), "jwk is not a public P-256 key")
    }
}
