@testable import AuthCore
import Digest
import ES256
import Foundation
import JSON
import TestSupport
import Wire
import XCTest

/// Issue 24: the agent's DPoP key and proofs (RFC 9449), and where the key is kept.
final class DPoPTests: XCTestCase {
    private func decode(_ part: Substring) throws -> JSONObject {
        let bytes = try XCTUnwrap(Base64URL.decode(String(part)))
        return try XCTUnwrap(try JSONParser.parse(bytes).objectValue)
    }

    func testAProofSaysWhatRFC9449AsksAndVerifiesWithItsOwnKey() throws {
        let key = try DPoPKey.generate()
        let proof = try key.proof(method: "POST", url: "https://api.example.com/items?x=1#top", at: Date(timeIntervalSince1970: 1_800_000_000.9),
                                  accessToken: "the-token", nonce: "n-1")
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        XCTAssertEqual(parts.count, 3)
        let header = try decode(parts[0])
        XCTAssertEqual(header["typ"], "dpop+jwt")
        XCTAssertEqual(header["alg"], "ES256")
        let jwk = try XCTUnwrap(header["jwk"]?.objectValue)
        XCTAssertEqual(Set(jwk.keys), ["crv", "kty", "x", "y"], "the public key only: no d")
        XCTAssertEqual(jwk["x"]?.stringValue, Base64URL.encode(key.key.x))
        let claims = try decode(parts[1])
        XCTAssertEqual(claims["htm"], "POST")
        XCTAssertEqual(claims["htu"], "https://api.example.com/items", "no query, no fragment")
        XCTAssertEqual(claims["iat"], .int(1_799_999_999), "the second before the current one: never in the future, even to a coarse clock")
        XCTAssertEqual(claims["ath"]?.stringValue, Base64URL.encode(SHA256.hash("the-token")))
        XCTAssertEqual(claims["nonce"], "n-1")
        XCTAssertEqual(claims["jti"]?.stringValue?.count, 27)
        let signature = try XCTUnwrap(Base64URL.decode(String(parts[2])))
        let verifier = try XCTUnwrap(P256Key(x: key.key.x, y: key.key.y))
        XCTAssertTrue(verifier.verify(signature, of: Array("\(parts[0]).\(parts[1])".utf8)))
        XCTAssertFalse(verifier.verify(signature, of: Array("\(parts[0]).e30".utf8)))

        // Glewlwyd compares iat with time(), which still reads the previous second for a few
        // milliseconds after a second begins (its coarse clock lags): a proof made then must not be ahead of it.
        let justAfter = try key.proof(method: "GET", url: "https://api.example.com/", at: Date(timeIntervalSince1970: 1_800_000_000.001))
        XCTAssertEqual(try decode(justAfter.split(separator: ".")[1])["iat"], .int(1_799_999_999))

        let token = try key.proof(method: "GET", url: "https://as.example.com/token", at: Date(timeIntervalSince1970: 5))
        let tokenClaims = try decode(token.split(separator: ".")[1])
        XCTAssertNil(tokenClaims["ath"], "no ath at the token endpoint")
        XCTAssertNil(tokenClaims["nonce"])
    }

    /// RFC 7517 A.2's P-256 key: libcrypto derives its public point from the private scalar,
    /// and the thumbprint is RFC 7638's (computed apart, with Python's hashlib).
    func testAStoredKeyComesBackWithItsPublicKeyAndThumbprint() throws {
        let d = "870MB6gfuTJ4HtUnUvYMyJpr5eUZNP4Bk43bVdj3eAE"
        let key = try XCTUnwrap(DPoPKey(storedForm: d))
        XCTAssertEqual(Base64URL.encode(key.key.x), "MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4")
        XCTAssertEqual(Base64URL.encode(key.key.y), "4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM")
        XCTAssertEqual(key.thumbprint, "cn-I_WNMClehiVp51i_0VpOENW1upEerA8sEam5hn-s")
        XCTAssertEqual(key.storedForm, d)
        XCTAssertNil(DPoPKey(storedForm: Base64URL.encode([UInt8](repeating: 0, count: 32))), "zero is not a private key")
        XCTAssertNil(DPoPKey(storedForm: "short"))
    }

    /// Signatures use nonces precomputed in the background: each must verify, and no nonce
    /// may ever serve twice (two signatures with one r give the private key away).
    func testPrecomputedNoncesAreUsedOnceAndSignaturesVerify() throws {
        let key = try P256Key.generate()
        let verifier = try XCTUnwrap(P256Key(x: key.x, y: key.y))
        var rs = Set<[UInt8]>()
        for i in 0..<2_000 {
            let message = Array("message \(i)".utf8)
            let signature = try key.sign(message)
            XCTAssertTrue(verifier.verify(signature, of: message))
            rs.insert(Array(signature.prefix(32)))
        }
        XCTAssertEqual(rs.count, 2_000)
    }

    func testEveryLoginKeyIsNew() throws {
        XCTAssertNotEqual(try DPoPKey.generate().thumbprint, try DPoPKey.generate().thumbprint)
    }

    /// The key is part of the session record (with the refresh token), and of nothing that is shown.
    func testTheSessionKeepsTheKeyAndNeverShowsIt() throws {
        let key = try DPoPKey.generate()
        let session = Session(accessToken: "a", tokenType: "DPoP", refreshToken: "r", obtainedAt: Date(timeIntervalSince1970: 1_800_000_000),
                              dpopKey: key)
        let json = session.toJSON()
        XCTAssertEqual(json.objectValue?["dpopKey"]?.stringValue, key.storedForm)
        let back = try Session(json: json)
        XCTAssertEqual(back.dpopKey, key)
        XCTAssertEqual(back, session)
        var dumped = ""
        dump(session, to: &dumped)
        for shown in [session.description, session.debugDescription, dumped, "\(key)", String(reflecting: key), "\(session.customMirror.children.map { "\($0)" })"] {
            XCTAssertFalse(shown.contains(key.storedForm), shown)
        }
        XCTAssertThrowsError(try Session(json: ["accessToken": "a", "tokenType": "DPoP", "obtainedAt": "2027-01-15T08:00:00Z", "generation": 1,
                                                "dpopKey": "not-a-key"]))
    }

    /// With the keyring store, the private key goes to the keyring item, never to the record file.
    func testTheKeyringStoreKeepsTheKeyWithTheSecrets() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let secrets = FakeSecretStore()
        let store = KeyringSessionStore(records: try FileSessionStore(directory: directory.url, warn: { _ in }), secrets: secrets, warn: { _ in })
        let key = try DPoPKey.generate()
        let session = Session(accessToken: "a", tokenType: "DPoP", refreshToken: "r", obtainedAt: Date(timeIntervalSince1970: 1_800_000_000),
                              generation: 1, dpopKey: key)
        try store.save(session, for: "corp")
        let record = try String(contentsOf: directory.url.appendingPathComponent("corp.json"), encoding: .utf8)
        XCTAssertFalse(record.contains(key.storedForm), record)
        XCTAssertFalse(record.contains("dpopKey"), record)
        XCTAssertTrue(secrets.secrets[0].contains(key.storedForm))
        XCTAssertEqual(try store.load("corp")?.dpopKey, key)
    }

    func testTokenTypeIsComparedCaseInsensitively() throws {
        XCTAssertEqual(try TokenResponse(json: ["access_token": "a", "token_type": "dpop"]).tokenType, "DPoP")
        XCTAssertEqual(try TokenResponse(json: ["access_token": "a", "token_type": "DPOP"]).tokenType, "DPoP")
        XCTAssertEqual(try TokenResponse(json: ["access_token": "a", "token_type": "bearer"]).tokenType, "Bearer")
    }

    func testNoncesAreRememberedPerOriginFromEveryAnswer() {
        let nonces = DPoPNonces()
        XCTAssertNil(nonces.nonce(for: "https://as.example.com/token"))
        nonces.keep("n1", for: "https://as.example.com/token")
        XCTAssertEqual(nonces.nonce(for: "https://as.example.com/userinfo"), "n1", "one origin, one nonce")
        XCTAssertNil(nonces.nonce(for: "https://api.example.com/x"))
        nonces.keep("", for: "https://as.example.com/token")  // an answer without one
        XCTAssertEqual(nonces.nonce(for: "https://as.example.com/token"), "n1", "kept until a new one comes")
        let challenge = HTTPResponse(status: 401, headers: ["WWW-Authenticate": "DPoP algs=\"ES256\", error=\"use_dpop_nonce\"", "DPoP-Nonce": "n2"])
        XCTAssertEqual(ServerChallenge.read(challenge, to: .provenToken), .retryWithNonce("n2"))
        XCTAssertNotEqual(ServerChallenge.read(HTTPResponse(status: 401, headers: ["WWW-Authenticate": "DPoP error=\"invalid_token\"", "DPoP-Nonce": "n2"]), to: .provenToken),
                          .retryWithNonce("n2"))
        XCTAssertEqual(ServerChallenge.read(HTTPResponse(status: 400, headers: ["DPoP-Nonce": "n3"], body: Array(#"{"error":"use_dpop_nonce"}"#.utf8)), to: .provenGrant),
                       .retryWithNonce("n3"))
        XCTAssertEqual(ServerChallenge.read(HTTPResponse(status: 401, headers: ["WWW-Authenticate": "DPoP error_description=\"x\", error=\"invalid_dpop_proof\""]), to: .provenToken),
                       .proofRefused)
    }

    /// One producer of a request's headers: a Bearer token's are the same for every request (what
    /// `sign`'s cache relies on); a DPoP-bound token's carry a proof of this method and URL, with `ath`
    /// and the origin's nonce; `sign`'s answer lists them in the same order.
    func testACredentialAuthorizesEachRequestInOnePlace() throws {
        let (clock, nonces) = (FakeClock(), DPoPNonces())
        let bearer = Credential(Session(accessToken: "b", obtainedAt: clock.now()), authorization: "Bearer b")
        XCTAssertEqual(try bearer.authorize(method: "GET", url: "https://api.example.com/a", clock: clock, nonces: nonces).map { "\($0): \($1)" },
                       ["Authorization: Bearer b"])
        XCTAssertEqual(try bearer.authorize(method: "POST", url: "https://api.example.com/b", clock: clock, nonces: nonces).map { "\($0): \($1)" },
                       ["Authorization: Bearer b"])

        let key = try DPoPKey.generate()
        nonces.keep("n-9", for: "https://api.example.com/")
        let bound = Credential(Session(accessToken: "d", tokenType: "DPoP", obtainedAt: clock.now(), dpopKey: key), authorization: "DPoP d")
        let headers = try bound.authorize(method: "DELETE", url: "https://api.example.com/items/1?x=2", clock: clock, nonces: nonces)
        XCTAssertEqual(headers.map(\.0), ["Authorization", "DPoP"])
        XCTAssertEqual(headers[0].1, "DPoP d")
        let claims = try decode(headers[1].1.split(separator: ".")[1])
        XCTAssertEqual(claims["htm"], "DELETE")
        XCTAssertEqual(claims["htu"], "https://api.example.com/items/1")
        XCTAssertEqual(claims["ath"]?.stringValue, Base64URL.encode(SHA256.hash("d")))
        XCTAssertEqual(claims["nonce"], "n-9")
        let again = try bound.authorize(method: "DELETE", url: "https://api.example.com/items/1?x=2", clock: clock, nonces: nonces)
        XCTAssertNotEqual(again[1].1, headers[1].1, "a proof is good for one request only")

        let signature = Signature(provider: "p", account: "a", shape: .none, credential: bound, proof: headers[1].1)
        XCTAssertEqual(signature.headers.map { "\($0): \($1)" }, headers.map { "\($0): \($1)" })
    }
}
