@testable import AuthCore
import Foundation
import JSON
import XCTest

/// `MCPBridge`'s use of the logins, against a scripted server and a fake authorizer: one refresh
/// and one resend after a 401 for the token sent, one login for every waiting message, and a
/// failed login answering each waiting request with the agent's reason.
final class MCPBridgeAuthTests: XCTestCase {
    final class Box<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var value: Value
        init(_ value: Value) { self.value = value }
        func with<R>(_ body: (inout Value) -> R) -> R { lock.lock(); defer { lock.unlock() }; return body(&value) }
    }

    struct Server: HTTPStreamingTransport {
        let answer: @Sendable (HTTPRequest) -> HTTPResponse
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { answer(request) }
        func open(_ request: HTTPRequest) async throws -> HTTPStream { try await openWhole(request) }
    }

    final class Logins: MCPAuthorizer, @unchecked Sendable {
        let token = Box<String?>(nil)
        let renewals = Box(0)
        let logins = Box(0)
        let loginError: AuthError?

        init(token: String?, loginError: AuthError? = nil) {
            self.token.with { $0 = token }
            self.loginError = loginError
        }

        /// A `sign` answer for `token`: `Bearer TOKEN`, or `DPoP TOKEN` with the proof `proof-NONCE`.
        private static func signature(_ token: String, proof: String?) -> Signature {
            let session = Session(accessToken: token, tokenType: proof == nil ? "Bearer" : "DPoP", obtainedAt: Date(timeIntervalSince1970: 0))
            return Signature(provider: "p", account: "a", shape: .none, credential: Credential(session, authorization: session.authorization), proof: proof)
        }

        /// Each signing's method and target.
        let targets = Box<[String]>([])

        func signature(for url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
            targets.with { $0.append("\(method) \(target)") }
            guard let token = token.with({ $0 }) else { return nil }
            return Self.signature(token, proof: dpop ? "proof-" + (nonce.with { $0 } ?? "none") : nil)
        }

        func renewed(after rejected: Signature, url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
            renewals.with { $0 += 1 }
            token.with { $0 = "fresh" }
            return Self.signature("fresh", proof: nil)
        }

        func logIn(url: String, challenge: BearerChallenge?) async throws(AuthError) -> Bool {
            logins.with { $0 += 1 }
            try? await Task.sleep(nanoseconds: 50_000_000)  // the other messages arrive meanwhile
            if let loginError { throw loginError }
            token.with { $0 = "fresh" }
            return true
        }

        /// What a step-up does: nil, none to run; else a failure, or the token it brings.
        var stepUp: Result<String, AuthError>?
        /// The scopes each step-up was asked for.
        let stepUps = Box<[[String]]>([])
        /// Signs with a DPoP proof naming the nonce kept (`proof-NONCE`) when set.
        var dpop = false
        let nonce = Box<String?>(nil)

        func steppedUp(after rejected: Signature, scopes: [String], url: String, method: String, at target: String) async throws(AuthError) -> Signature? {
            stepUps.with { $0.append(scopes) }
            switch stepUp {
            case nil: return nil
            case .failure(let error): throw error
            case .success(let fresh):
                token.with { $0 = fresh }
                return try await signature(for: url, method: method, at: target)
            }
        }

        func keep(dpopNonce: String, url: String) { nonce.with { $0 = dpopNonce } }
    }

    private func run(_ lines: [String], server: Server, logins: Logins) async throws -> [JSONValue] {
        let output = Box<[[UInt8]]>([])
        let bridge = MCPBridge(url: "http://127.0.0.1:9/mcp", transport: server, authorizer: logins,
                               output: { line in output.with { $0.append(line) } }, log: { _ in })
        for line in lines { bridge.receive(line: Array(line.utf8)) }
        await bridge.finish(grace: 5)
        return try output.with { $0 }.map { try JSONParser.parse($0) }
    }

    private static func answering(_ accepted: String) -> Server {
        Server { request in
            guard request.header("authorization") == accepted else {
                return HTTPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer"])
            }
            let id = (try? JSONParser.parse(request.body ?? []))?["id"] ?? .null
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"],
                                body: JSONSerializer.bytes(["jsonrpc": "2.0", "id": id, "result": [:]]))
        }
    }

    func testA401ForTheTokenSentRefreshesOnceAndResends() async throws {
        let logins = Logins(token: "old")
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.answering("Bearer fresh"), logins: logins)
        XCTAssertEqual(answers.map { $0["result"] != nil }, [true])
        XCTAssertEqual(logins.renewals.with { $0 }, 1)
        XCTAssertEqual(logins.logins.with { $0 }, 0)
    }

    func testStillRejectedAfterTheRefreshIsOneErrorNotALoop() async throws {
        let logins = Logins(token: "old")
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.answering("never"), logins: logins)
        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(answers.first?["error"]?["data"]?["status"], 401)
        XCTAssertEqual(logins.renewals.with { $0 }, 1)
    }

    /// One refresh and one login are budgets of their own (`ExchangeState`): a token a login just
    /// brought that the server refuses is refreshed once, then the request is answered.
    func testA401AfterTheLoginIsRefreshedOnce() async throws {
        let logins = Logins(token: nil)
        let seen = Box(0)
        let server = Server { request in
            guard request.header("authorization") == "Bearer fresh", seen.with({ $0 += 1; return $0 }) > 1 else {
                return HTTPResponse(status: 401, headers: ["WWW-Authenticate": "Bearer"])
            }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Array(#"{"jsonrpc":"2.0","id":1,"result":{}}"#.utf8))
        }
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: server, logins: logins)
        XCTAssertEqual(answers.map { $0["result"] != nil }, [true])
        XCTAssertEqual(logins.logins.with { $0 }, 1)
        XCTAssertEqual(logins.renewals.with { $0 }, 1)
    }

    func testAFailedLoginAnswersEachWaitingRequestWithTheReason() async throws {
        let logins = Logins(token: nil, loginError: AuthError(.loginDenied, "The user refused."))
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                                     #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}"#],
                                    server: Self.answering("Bearer fresh"), logins: logins)
        XCTAssertEqual(Set(answers.compactMap { $0["id"] }), [1, 2], "one answer each; none for the notification")
        for answer in answers {
            XCTAssertEqual(answer["error"]?["code"], 1008)
            XCTAssertEqual(answer["error"]?["data"]?["reason"], "loginDenied")
        }
    }

    func testALoginServesEveryWaitingMessage() async throws {
        let logins = Logins(token: nil)
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, #"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#],
                                    server: Self.answering("Bearer fresh"), logins: logins)
        XCTAssertEqual(Set(answers.compactMap { $0["result"] != nil ? $0["id"] : nil }), [1, 2])
    }

    // MARK: Step-up and DPoP nonces

    private static let insufficientScope = #"Bearer error="insufficient_scope", scope="mcp admin", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp""#

    /// 403 `insufficient_scope` unless the token is `accepted`, then an empty result.
    private static func scoped(_ accepted: String) -> Server {
        Server { request in
            guard request.header("authorization") == accepted else {
                return HTTPResponse(status: 403, headers: ["WWW-Authenticate": insufficientScope])
            }
            let id = (try? JSONParser.parse(request.body ?? []))?["id"] ?? .null
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"],
                                body: JSONSerializer.bytes(["jsonrpc": "2.0", "id": id, "result": [:]]))
        }
    }

    func testA403InsufficientScopeStepsUpAndResendsOnce() async throws {
        let logins = Logins(token: "narrow")
        logins.stepUp = .success("wide")
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.scoped("Bearer wide"), logins: logins)
        XCTAssertEqual(answers.map { $0["result"] != nil }, [true], "\(answers)")
        XCTAssertEqual(logins.stepUps.with { $0 }, [["mcp", "admin"]], "the challenge (its scopes) goes to the step-up")
        XCTAssertEqual(logins.renewals.with { $0 }, 0)
    }

    func testAFailedStepUpAnswersWithTheReasonAndAStillRefusedOneIsOneError() async throws {
        let denied = Logins(token: "narrow")
        denied.stepUp = .failure(AuthError(.loginDenied, "The user refused."))
        var answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.scoped("Bearer wide"), logins: denied)
        XCTAssertEqual(answers.count, 1)
        XCTAssertEqual(answers.first?["error"]?["data"]?["reason"], "loginDenied", "\(answers)")
        // Stepped up, and the server still refuses: two step-ups at most (MCP 2026-07-28: bounded), then its 403 is the answer.
        // (With the real logins the second asks nothing new and is declined: `ScopeChallenge.asksNothingNew`.)
        let refused = Logins(token: "narrow")
        refused.stepUp = .success("other")
        answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.scoped("Bearer wide"), logins: refused)
        XCTAssertEqual(answers.first?["error"]?["data"]?["status"], 403, "\(answers)")
        XCTAssertEqual(refused.stepUps.with { $0.count }, ExchangeState.stepUpLimit)
        // Nothing to step up to (no learned provider, or no scope the login lacks).
        answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: Self.scoped("Bearer wide"), logins: Logins(token: "narrow"))
        XCTAssertEqual(answers.first?["error"]?["data"]?["reason"], "scopeNotGranted", "\(answers)")
    }

    func testUseDPoPNonceResendsOnceWithAProofCarryingItAndSpendsNoRefresh() async throws {
        let logins = Logins(token: "bound")
        logins.dpop = true
        let proofs = Box<[String]>([])
        let server = Server { request in
            proofs.with { $0.append(request.header("dpop") ?? "") }
            guard request.header("dpop") == "proof-n1" else {
                return HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce", error_description="a nonce""#, "DPoP-Nonce": "n1"])
            }
            let id = (try? JSONParser.parse(request.body ?? []))?["id"] ?? .null
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json", "DPoP-Nonce": "n1"],
                                body: JSONSerializer.bytes(["jsonrpc": "2.0", "id": id, "result": [:]]))
        }
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: server, logins: logins)
        XCTAssertEqual(answers.map { $0["result"] != nil }, [true], "\(answers)")
        XCTAssertEqual(proofs.with { $0 }, ["proof-none", "proof-n1"])
        XCTAssertEqual(logins.renewals.with { $0 }, 0, "a refused proof is not a dead token")
    }

    func testARefusedProofIsOneErrorWithoutARefresh() async throws {
        let logins = Logins(token: "bound")
        logins.dpop = true
        let server = Server { _ in HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="invalid_dpop_proof""#]) }
        let answers = try await run([#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#], server: server, logins: logins)
        XCTAssertEqual(answers.first?["error"]?["data"]?["status"], 401, "\(answers)")
        XCTAssertEqual(logins.renewals.with { $0 }, 0)
    }
}
