@testable import AuthCore
import ES256
import Foundation
import JSON
import Wire
import XCTest

/// Signed client authentication (RFC 7523 §2.2) and PAR's answers (RFC 9126), without a server:
/// the assertion's claims and signatures (checked here with the keys' public halves), the key
/// files the agent accepts and refuses, `config add --generate-key`'s file, the configuration's
/// refusals, and how a PAR endpoint's answers are read.
final class ClientAuthenticationTests: XCTestCase {
    private var directory: URL!

    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-client-auth-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    override func tearDown() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func provider(_ json: String) throws -> ProviderConfig {
        let config = try AgentConfig.parse(Array(#"{"providers": [\#(json)]}"#.utf8), file: "c")
        return try XCTUnwrap(config.providers.first)
    }

    /// The assertion's parts: header, claims, signing input and signature.
    private func parts(_ pairs: [(String, String)]) throws -> (header: JSONValue, claims: JSONValue, input: [UInt8], signature: [UInt8]) {
        XCTAssertEqual(pairs.first { $0.0 == "client_assertion_type" }?.1, "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
        let jwt = try XCTUnwrap(pairs.first { $0.0 == "client_assertion" }?.1)
        let p = jwt.split(separator: ".").map(String.init)
        XCTAssertEqual(p.count, 3)
        return (try JSONParser.parse(try XCTUnwrap(Base64URL.decode(p[0]))), try JSONParser.parse(try XCTUnwrap(Base64URL.decode(p[1]))),
                Array("\(p[0]).\(p[1])".utf8), try XCTUnwrap(Base64URL.decode(p[2])))
    }

    private func assertion(_ config: ProviderConfig, endpoint: String = "https://sso.example/token", now: Date = Date(timeIntervalSince1970: 1_800_000_000)) throws -> [(String, String)] {
        switch ClientAssertion.pairs(config, endpoint: endpoint, now: now) {
        case .success(let pairs): return pairs
        case .failure(let problem): throw problem
        }
    }

    // MARK: client_secret_jwt

    func testAnAssertionNamesTheClientTheEndpointAndIsUsedOnce() throws {
        let config = try provider(#"{"id": "p", "flow": "clientCredentials", "origins": ["https://a.example"], "tokenEndpoint": "https://sso.example/token", "clientId": "svc", "clientSecret": "s3cret", "clientAuth": {"method": "client_secret_jwt"}}"#)
        let first = try parts(try assertion(config))
        XCTAssertEqual(first.header, ["alg": "HS256", "typ": "JWT"])
        XCTAssertEqual(first.claims["iss"], "svc")
        XCTAssertEqual(first.claims["sub"], "svc")
        XCTAssertEqual(first.claims["aud"], "https://sso.example/token", "the endpoint, as Glewlwyd wants")
        XCTAssertEqual(first.claims["iat"], 1_800_000_000)
        XCTAssertEqual(first.claims["exp"], 1_800_000_060, "a minute: one request's worth")
        XCTAssertEqual(first.signature, try HMACSHA256.mac(key: Array("s3cret".utf8), message: first.input))
        let second = try parts(try assertion(config))
        XCTAssertNotEqual(first.claims["jti"], second.claims["jti"], "a new jti for every request")
        XCTAssertFalse("\(config)".contains("s3cret"))
    }

    /// RFC 4231 test case 2, through libcrypto.
    func testHMACSHA256MatchesRFC4231() throws {
        let mac = try HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    // MARK: private_key_jwt

    private func openssl(_ arguments: [String]) throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") else { throw XCTSkip("openssl is not installed") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, arguments.joined(separator: " "))
    }

    private func keyFile(_ name: String, _ arguments: [String]) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try openssl(["genpkey"] + arguments + ["-out", path])
        XCTAssertEqual(chmod(path, 0o600), 0)
        return path
    }

    func testRS256PS256AndES256AssertionsVerifyWithThePublicKeys() throws {
        let rsa = try keyFile("rsa.pem", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        let ec = try keyFile("ec.pem", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        for (path, alg) in [(rsa, "RS256"), (rsa, "PS256"), (ec, "ES256")] {
            let config = try provider(#"{"id": "p", "flow": "clientCredentials", "origins": ["https://a.example"], "tokenEndpoint": "https://sso.example/token", "clientId": "bank", "clientAuth": {"method": "private_key_jwt", "key": "\#(path)", "alg": "\#(alg)", "kid": "k1"}}"#)
            let a = try parts(try assertion(config))
            XCTAssertEqual(a.header, ["alg": .string(alg), "kid": "k1", "typ": "JWT"], alg)
            guard case .success(let key) = ClientKeys.load(path) else { return XCTFail("\(path) unreadable") }
            let jwk = try JSONParser.parse(Array(key.publicJWK(kid: nil, alg: nil).utf8))
            XCTAssertNil(jwk["d"], "only the public half")
            switch key {
            case .rsa:
                let pub = try XCTUnwrap(RSAKey(modulus: try XCTUnwrap(jwk["n"]?.stringValue.flatMap(Base64URL.decode)), exponent: try XCTUnwrap(jwk["e"]?.stringValue.flatMap(Base64URL.decode))))
                XCTAssertTrue(pub.verify(a.signature, of: a.input, padding: alg == "PS256" ? .pss : .pkcs1), alg)
                XCTAssertFalse(pub.verify(a.signature, of: a.input, padding: alg == "PS256" ? .pkcs1 : .pss), "\(alg) is not the other padding")
            case .p256:
                let pub = try XCTUnwrap(P256Key(x: try XCTUnwrap(jwk["x"]?.stringValue.flatMap(Base64URL.decode)), y: try XCTUnwrap(jwk["y"]?.stringValue.flatMap(Base64URL.decode))))
                XCTAssertTrue(pub.verify(a.signature, of: a.input), alg)
            }
        }
    }

    /// FAPI 2.0 asks for the issuer as the assertion's audience (Glewlwyd wants the endpoint: the profile decides).
    func testTheFAPI2ProfileMakesTheIssuerTheAudience() throws {
        let path = try keyFile("ec.pem", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        let config = try provider(#"{"id": "p", "flow": "authorizationCode", "origins": ["https://a.example"], "issuer": "https://sso.example", "clientId": "bank", "profile": "fapi2", "clientAuth": {"method": "private_key_jwt", "key": "\#(path)"}}"#)
        XCTAssertEqual(try parts(try assertion(config, endpoint: "https://sso.example/par")).claims["aud"], "https://sso.example")
        XCTAssertTrue(config.par)
        XCTAssertTrue(config.dpop)
    }

    func testKeyFilesTheAgentRefuses() throws {
        let path = try keyFile("ec.pem", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384"])
        let text = directory.appendingPathComponent("text.pem").path
        try Data("not a key".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertEqual(chmod(text, 0o600), 0)
        let readable = try keyFile("readable.pem", ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        XCTAssertEqual(chmod(readable, 0o640), 0)
        for (file, problem) in [(path, "holds no unencrypted P-256 or RSA private key"), (text, "holds no unencrypted P-256 or RSA private key"),
                                (readable, "other users can read or change it (mode 640); run: chmod 600 \(readable)"),
                                (directory.appendingPathComponent("missing.pem").path, "cannot read it")] {
            guard case .failure(let refusal) = ClientKeys.load(file) else { XCTFail("\(file) accepted"); continue }
            XCTAssertTrue(refusal.description.contains(problem), refusal.description)
        }
        let rsa = try keyFile("rsa.pem", ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"])
        guard case .success(let key) = ClientKeys.load(rsa) else { return XCTFail() }
        XCTAssertEqual(key.algorithmProblem("ES256"), "the key is an RSA key, which signs RS256 or PS256, not ES256")
    }

    /// `config add --generate-key`'s file: 0600, read back by libcrypto as the same key, never written over.
    func testAGeneratedKeyFileIsReadBackAndNeverOverwritten() throws {
        let path = directory.appendingPathComponent("keys/bank.client-key.pem").path
        guard case .success(let made) = ClientKeyFile.generate(at: path) else { return XCTFail("not generated") }
        XCTAssertEqual((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        guard case .success(.p256(let key)) = ClientKeys.load(path) else { return XCTFail("not read back") }
        XCTAssertEqual(made.kid, key.thumbprint)
        let jwk = try JSONParser.parse(Array(made.jwk.utf8))
        XCTAssertEqual(jwk["x"]?.stringValue, Base64URL.encode(key.x))
        XCTAssertEqual(jwk["kid"]?.stringValue, made.kid)
        XCTAssertNil(jwk["d"])
        guard case .failure(let refusal) = ClientKeyFile.generate(at: path) else { return XCTFail("overwritten") }
        XCTAssertTrue(refusal.description.contains("cannot create it"), refusal.description)
    }

    func testTheConfigurationRefusesAnIncompleteClientAuth() {
        let base = #""id": "p", "flow": "clientCredentials", "origins": ["https://a.example"], "tokenEndpoint": "https://sso.example/token", "clientId": "c""#
        for (auth, problem) in [
            (#""clientAuth": {"method": "mtls"}"#, #"unknown client authentication method "mtls"; expected "private_key_jwt" or "client_secret_jwt""#),
            (#""clientAuth": {"method": "private_key_jwt"}"#, #"private_key_jwt requires "key""#),
            (#""clientAuth": {"method": "private_key_jwt", "key": "key.pem"}"#, "must be an absolute path"),
            (#""clientAuth": {"method": "private_key_jwt", "key": "/k.pem", "alg": "HS256"}"#, "private_key_jwt signs with ES256, RS256 or PS256"),
            (#""clientAuth": {"method": "client_secret_jwt"}"#, #"client_secret_jwt requires the provider's "clientSecret""#),
            (#""profile": "fapi3""#, #"unknown profile "fapi3"; expected one of "fapi2""#),
        ] {
            XCTAssertThrowsError(try provider("{\(base), \(auth)}"), auth) { error in
                XCTAssertTrue("\(error)".contains(problem), "\(error)")
            }
        }
    }

    // MARK: PAR's answers

    func testAPushedAuthorizationRequestsAnswers() throws {
        let config = ProviderConfig(id: "p", displayName: "P", flow: .authorizationCode)
        func answer(_ status: Int, _ body: String) -> HTTPResponse { HTTPResponse(status: status, headers: [:], body: Array(body.utf8)) }
        let pushed = try PushedAuthorization.read(answer(201, #"{"request_uri": "urn:x", "expires_in": 90}"#), provider: config)
        XCTAssertEqual(pushed, PushedAuthorization(requestURI: "urn:x", expiresIn: 90))
        XCTAssertEqual(pushed.authorizationURL(endpoint: "https://sso.example/auth", clientId: "c i"),
                       "https://sso.example/auth?client_id=c+i&request_uri=urn%3Ax")
        let cases: [(HTTPResponse, AuthErrorCode, String, String?)] = [
            (answer(400, #"{"error": "invalid_request", "error_description": "redirect_uri not allowed"}"#), .loginDenied,
             "P refused the pushed authorization request (invalid_request: redirect_uri not allowed).", "redirect_uri not allowed"),
            (answer(401, ""), .loginDenied, "P refused the pushed authorization request (http_401).", nil),
            (answer(201, #"{"request_uri": "urn:x"}"#), .loginDenied, "P sent an unusable answer: the pushed authorization request's answer has no request_uri or no positive expires_in.", nil),
            (answer(503, ""), .authServerUnavailable, "P is unavailable: the pushed authorization request endpoint answered HTTP 503.", nil),
        ]
        for (response, code, message, description) in cases {
            XCTAssertThrowsError(try PushedAuthorization.read(response, provider: config)) { error in
                let e = error as? AuthError
                XCTAssertEqual(e?.code, code)
                XCTAssertEqual(e?.message, message)
                XCTAssertEqual(e?.serverDescription, description)
            }
        }
    }
}
