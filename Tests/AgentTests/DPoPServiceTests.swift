@testable import AuthCore
import DevIssuer
import ES256
import Foundation
import JSON
import JSONRPC
import Locking
import Logging
import TestSupport
import Wire
import XCTest

/// Issue 24: DPoP end to end — the agent's service against the dev issuer, whose
/// verifier (`DevIssuer.DPoPVerifier`) checks every proof independently of the
/// code that made it.
final class DPoPServiceTests: XCTestCase {
    private var issuer: DevIssuer!
    private var directory: TemporaryDirectory!
    private let logged = Locked<[String]>([])
    private let transport = SystemHTTPTransport()

    override func setUpWithError() throws {
        issuer = DevIssuer(options: .init(deviceInterval: 0))
        try issuer.start()
        directory = try TemporaryDirectory()
    }

    override func tearDown() {
        issuer.stop()
        directory.remove()
    }

    private func provider(_ flow: Flow = .password) -> ProviderConfig {
        var p = ProviderConfig(id: "api", flow: flow, origins: [Origin(url: issuer.baseURL)!], tokenEndpoint: "\(issuer.baseURL)/token",
                               userinfoEndpoint: "\(issuer.baseURL)/userinfo", clientId: flow == .clientCredentials ? "svc" : "cli",
                               clientSecret: flow == .clientCredentials ? "svc-secret" : nil,
                               deviceAuthorizationEndpoint: "\(issuer.baseURL)/device_authorization")
        p.dpop = true
        return p
    }

    private func service(_ flow: Flow = .password) throws -> AuthService {
        let logged = self.logged
        return AuthService(config: AgentConfig(store: .file(path: directory.url.path), providers: [provider(flow)]),
                           store: try FileSessionStore(directory: directory.url, warn: { _ in }), transport: transport,
                           logger: Logger(level: .debug, sink: { line in logged.withLock { $0.append(line) } }), events: { _ in })
    }

    private func logIn(_ service: AuthService) async throws {
        _ = try await service.login(provider: "api", credentials: .password(username: "alice", password: "wonderland"))
    }

    private func signed(_ service: AuthService, _ method: String = "GET", _ path: String = "/api/me") async throws -> Signature {
        guard case .signed(let s) = try await service.sign(url: issuer.baseURL + path, provider: nil, method: method) else {
            throw XCTSkip("not signed")
        }
        return s
    }

    private func send(_ headers: [(String, String)], _ method: String = "GET", _ path: String = "/api/me") async throws -> HTTPResponse {
        try await transport.send(HTTPRequest(method: method, url: issuer.baseURL + path, headers: headers))
    }

    private static func part(_ jws: String, _ index: Int) throws -> JSONObject {
        let piece = jws.split(separator: ".", omittingEmptySubsequences: false)[index]
        return try XCTUnwrap(try JSONParser.parse(XCTUnwrap(Base64URL.decode(String(piece)))).objectValue)
    }

    /// The RFC 7638 thumbprint of the key in a proof's header.
    private static func thumbprint(ofProof proof: String) throws -> String {
        let jwk = try XCTUnwrap(part(proof, 0)["jwk"]?.objectValue)
        let key = try XCTUnwrap(P256Key(x: XCTUnwrap(Base64URL.decode(jwk["x"]!.stringValue!)), y: XCTUnwrap(Base64URL.decode(jwk["y"]!.stringValue!))))
        return key.thumbprint
    }

    /// The private key as stored (the record file of the `file` store, beside the refresh token).
    private func storedKey() throws -> String {
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".json") && $0.contains("api") }
        for name in files {
            let text = try String(contentsOf: directory.url.appendingPathComponent(name), encoding: .utf8)
            if let key = (try? JSONParser.parse(Array(text.utf8)))?["session"]?["dpopKey"]?.stringValue { return key }
        }
        throw XCTSkip("no stored key in \(files)")
    }

    func testTheTokenIsBoundToTheAgentsKeyAndSignAnswersWithAFreshProof() async throws {
        let service = try service()
        try await logIn(service)
        let token = try await service.token(provider: "api")
        XCTAssertEqual(token.tokenType, "DPoP", "RPC token says the token is useless without a proof")
        let s = try await signed(service)
        XCTAssertEqual(s.authorization, "DPoP \(token.accessToken)")
        let proof = try XCTUnwrap(s.proof)
        let jkt = try XCTUnwrap(Self.part(token.accessToken, 1)["cnf"]?["jkt"]?.stringValue)
        XCTAssertEqual(jkt, try Self.thumbprint(ofProof: proof), "cnf.jkt is the RFC 7638 thumbprint of the agent's key")

        let ok = try await send([("Authorization", s.authorization), ("DPoP", proof)])
        XCTAssertEqual(ok.status, 200, String(decoding: ok.body, as: UTF8.self))
        let replayed = try await send([("Authorization", s.authorization), ("DPoP", proof)])
        XCTAssertEqual(replayed.status, 401, "a replayed proof (same jti) is refused")
        XCTAssertTrue(replayed.headers["www-authenticate"]?.contains("invalid_dpop_proof") ?? false)
        let asBearer = try await send([("Authorization", "Bearer \(token.accessToken)")])
        XCTAssertEqual(asBearer.status, 401, "the bound token is useless as a bearer token")
        let wrongMethod = try await signed(service, "POST")
        let refused = try await send([("Authorization", wrongMethod.authorization), ("DPoP", wrongMethod.proof!)])
        XCTAssertEqual(refused.status, 401, "a proof for POST does not authorize a GET")
        let forUserinfo = try await signed(service, "GET", "/userinfo")
        let info = try await send([("Authorization", forUserinfo.authorization), ("DPoP", forUserinfo.proof!)], "GET", "/userinfo")
        XCTAssertEqual(info.status, 200)

        // The private key is in the store (with the refresh token) and nowhere else.
        let key = try storedKey()
        let answers = [SignAnswers().value(for: .signed(s)), SignAnswers().value(for: .signed(forUserinfo))].map(JSONSerializer.string)
        for text in answers + logged.withLock({ $0 }) + ["\(token)", "\(s)"] { XCTAssertFalse(text.contains(key), text) }
        let fetched = try await service.fetch(FetchRequest(method: "GET", url: issuer.baseURL + "/api/me"), provider: nil)
        XCTAssertEqual(fetched.status, 200)
        XCTAssertFalse(fetched.retried)
    }

    func testJtiIsUniqueAcrossTenThousandSigns() async throws {
        let service = try service()
        try await logIn(service)
        var seen = Set<String>()
        for _ in 0..<10_000 {
            guard case .signed(let s)? = try service.signNow(url: issuer.baseURL + "/api/me", provider: nil, method: "GET") else { return XCTFail("not signed from memory") }
            seen.insert(try XCTUnwrap(Self.part(XCTUnwrap(s.proof), 1)["jti"]?.stringValue))
        }
        XCTAssertEqual(seen.count, 10_000)
    }

    func testARefreshProvesTheSameKeyAlsoAfterARestart() async throws {
        let first = try service()
        try await logIn(first)
        let before = try await first.token(provider: "api").accessToken
        let jkt = try XCTUnwrap(Self.part(before, 1)["cnf"]?["jkt"]?.stringValue)
        let refreshed = try await first.refresh(provider: "api", failedAuthorization: nil)
        XCTAssertTrue(refreshed.refreshed)
        let after = try await first.token(provider: "api").accessToken
        XCTAssertNotEqual(before, after)
        XCTAssertEqual(try Self.part(after, 1)["cnf"]?["jkt"]?.stringValue, jkt)

        let restarted = try service()
        let again = try await restarted.refresh(provider: "api", failedAuthorization: nil)
        XCTAssertTrue(again.refreshed, "the dev issuer refuses a refresh of a bound token proven by another key")
        let v1 = try await restarted.token(provider: "api").accessToken
        XCTAssertEqual(try Self.part(v1, 1)["cnf"]?["jkt"]?.stringValue, jkt)

        // A new login makes a new key.
        try await logIn(restarted)
        let v2 = try await restarted.token(provider: "api").accessToken
        XCTAssertNotEqual(try Self.part(v2, 1)["cnf"]?["jkt"]?.stringValue, jkt)
        // Logout deletes the key with the session.
        _ = try await restarted.logout(provider: "api")
        XCTAssertThrowsError(try storedKey())
    }

    func testMandatoryNoncesCostOneRetryEach() async throws {
        issuer.setDPoPNonceRequired(true)
        let service = try service()
        try await logIn(service)
        let token = try await service.token(provider: "api")
        XCTAssertEqual(token.tokenType, "DPoP")
        XCTAssertEqual(issuer.count("token"), 2, "use_dpop_nonce, then the token")
        XCTAssertEqual(issuer.count("userinfo"), 1, "the nonce of the origin was known")
        issuer.rotateDPoPNonce()
        let fetched = try await service.fetch(FetchRequest(method: "GET", url: issuer.baseURL + "/api/me"), provider: nil)
        XCTAssertEqual(fetched.status, 200, String(decoding: fetched.body, as: UTF8.self))
        XCTAssertFalse(fetched.retried, "a nonce retry is not a refresh")
        XCTAssertEqual(issuer.count("api"), 2, "use_dpop_nonce, then the answer")
        issuer.rotateDPoPNonce()
        let refreshed = try await service.refresh(provider: "api", failedAuthorization: nil)
        XCTAssertTrue(refreshed.refreshed)
        XCTAssertEqual(issuer.count("token"), 4)
        // sign puts the nonce it learnt into its proofs.
        let s = try await signed(service)
        XCTAssertNotNil(try Self.part(s.proof!, 1)["nonce"]?.stringValue)
        let v5 = try await send([("Authorization", s.authorization), ("DPoP", s.proof!)])
        XCTAssertEqual(v5.status, 200)
    }

    func testARefusedProofNeverEndsTheSessionNorSpendsARefresh() async throws {
        let service = try service()
        try await logIn(service)
        issuer.refuseDPoPProofsNext(1)
        let fetched = try await service.fetch(FetchRequest(method: "GET", url: issuer.baseURL + "/api/me"), provider: nil)
        XCTAssertEqual(fetched.status, 401, "the resource's refusal comes back as is")
        XCTAssertFalse(fetched.retried, "no refresh for a refused proof")
        issuer.refuseDPoPProofsNext(1)
        do {
            _ = try await service.refresh(provider: "api", failedAuthorization: nil)
            XCTFail("the token endpoint refused the proof")
        } catch {
            XCTAssertEqual(error.code, .authServerUnavailable)
            XCTAssertTrue(error.message.contains("invalid_dpop_proof"), error.message)
        }
        let v6 = try await service.refresh(provider: "api", failedAuthorization: nil)
        XCTAssertTrue(v6.refreshed, "the refresh token was not spent")
        let v7 = try await service.fetch(FetchRequest(method: "GET", url: issuer.baseURL + "/api/me"), provider: nil)
        XCTAssertEqual(v7.status, 200)
    }

    func testABearerAnswerToAProofIsUsedAsBearer() async throws {
        issuer.answerBearerToDPoPNext(1)
        let service = try service()
        try await logIn(service)
        let v8 = try await service.token(provider: "api")
        XCTAssertEqual(v8.tokenType, "Bearer")
        let s = try await signed(service)
        XCTAssertTrue(s.authorization.hasPrefix("Bearer "))
        XCTAssertNil(s.proof)
        let v9 = try await send([("Authorization", s.authorization)])
        XCTAssertEqual(v9.status, 200)
        XCTAssertEqual(logged.withLock { $0 }.filter { $0.contains("token_type Bearer") }.count, 1, "logged once")
    }

    func testClientCredentialsAndDeviceLoginsAreProvenToo() async throws {
        let cc = try service(.clientCredentials)
        _ = try await cc.login(provider: "api", credentials: nil)
        let v10 = try await cc.token(provider: "api")
        XCTAssertEqual(v10.tokenType, "DPoP")
        _ = try await cc.logout(provider: "api")

        let device = try service(.deviceCode)
        let issuer = self.issuer!
        let context = LoginContext(prompt: { prompt, _ in
            if case .deviceCode(let userCode, _, _, _) = prompt { issuer.approveDevice(userCode: userCode, username: "bob") }
        })
        _ = try await device.login(provider: "api", credentials: nil, context: context)
        let v11 = try await device.token(provider: "api")
        XCTAssertEqual(v11.tokenType, "DPoP")
        let v12 = try await device.fetch(FetchRequest(method: "GET", url: issuer.baseURL + "/api/me"), provider: nil)
        XCTAssertEqual(v12.status, 200)
    }
}
