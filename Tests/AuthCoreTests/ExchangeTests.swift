@testable import AuthCore
import XCTest

/// `Exchange`: the decision table (what a request does next, given what it spent and how its
/// answer was classified), and the driver against scripted answers, without I/O.
final class ExchangeTests: XCTestCase {
    private static let challenge = BearerChallenge(resourceMetadata: "https://api.example/.well-known/oauth-protected-resource", scopes: ["read"])

    func testTheDecisionTable() {
        let fresh = ExchangeState()
        let refreshed = ExchangeState(refreshed: true)
        let loggedIn = ExchangeState(loggedIn: true)
        let steppedUp = ExchangeState(stepUps: 1)
        let steppedUpTwice = ExchangeState(stepUps: 2)
        let nonced = ExchangeState(nonceRetried: true)
        let rows: [(ExchangeState, ServerChallenge, ExchangeStep, UInt)] = [
            (fresh, .none, .done, #line),
            (fresh, .proofRefused, .done, #line),
            (nonced, .proofRefused, .done, #line),
            (fresh, .retryWithNonce("n"), .resendWithNonce, #line),
            (refreshed, .retryWithNonce("n"), .resendWithNonce, #line),
            (nonced, .retryWithNonce("n"), .spent(.resendWithNonce), #line),
            (fresh, .refresh, .refresh, #line),
            (nonced, .refresh, .refresh, #line),
            (loggedIn, .refresh, .refresh, #line),
            (refreshed, .refresh, .spent(.refresh), #line),
            (fresh, .discover(Self.challenge), .logIn(Self.challenge), #line),
            (fresh, .discover(nil), .logIn(nil), #line),
            (refreshed, .discover(nil), .logIn(nil), #line),
            (loggedIn, .discover(Self.challenge), .spent(.logIn(Self.challenge)), #line),
            (steppedUp, .discover(nil), .logIn(nil), #line),
            (fresh, .insufficientScope(["admin"]), .stepUp(["admin"]), #line),
            (refreshed, .insufficientScope(["admin"]), .stepUp(["admin"]), #line),
            (loggedIn, .insufficientScope(["admin"]), .stepUp(["admin"]), #line),
            (steppedUp, .insufficientScope(["admin"]), .stepUp(["admin"]), #line),
            (steppedUpTwice, .insufficientScope(["admin"]), .spent(.stepUp(["admin"])), #line),
        ]
        for (state, challenge, step, line) in rows {
            XCTAssertEqual(state.decide(challenge), step, "\(state) + \(challenge)", line: line)
        }
    }

    func testTakingAStepSpendsItAndANewCredentialGetsItsOwnNonceRetry() {
        var state = ExchangeState()
        state.take(.resendWithNonce)
        XCTAssertEqual(state, ExchangeState(nonceRetried: true))
        state.take(.refresh)
        XCTAssertEqual(state, ExchangeState(refreshed: true), "the renewed token's proof may need the nonce anew")
        state.take(.resendWithNonce)
        state.take(.stepUp(["admin"]))
        XCTAssertEqual(state, ExchangeState(refreshed: true, stepUps: 1))
        state.take(.logIn(nil))
        XCTAssertEqual(state, ExchangeState(refreshed: true, loggedIn: true, stepUps: 1))
        state.take(.done)
        state.take(.spent(.refresh))
        XCTAssertEqual(state, ExchangeState(refreshed: true, loggedIn: true, stepUps: 1), "nothing taken, nothing spent")
    }

    /// A scripted server and renewals: `Signed` is a token name, the answers come in order.
    private final class Script: @unchecked Sendable {
        var answers: [HTTPResponse]
        var sent: [[(String, String)]] = []
        var kept: [String] = []
        var rejected: [String] = []
        init(_ answers: [HTTPResponse]) { self.answers = answers }

        func exchange(proven: Bool = false, refresh: String? = "fresh", logIn: String? = nil) -> Exchange<String, HTTPResponse> {
            Exchange(
                carries: { token in token == nil ? .unsigned : proven ? .provenToken : .token },
                sign: { token in token.map { [("Authorization", "Bearer " + $0)] } ?? [] },
                send: { headers in self.sent.append(headers); return self.answers.removeFirst() },
                head: { $0 },
                keepNonce: { self.kept.append($0) },
                refresh: { rejected in self.rejected.append(rejected); return refresh },
                logIn: { _ in logIn })
        }
    }

    func testA401IsRefreshedOnceWithTheRejectedTokenNamedAndASecondIsGivenBack() async throws {
        let script = Script([HTTPResponse(status: 401), HTTPResponse(status: 401)])
        var state = ExchangeState()
        let outcome = try await script.exchange().run("old", state: &state)
        XCTAssertEqual(outcome.answer.status, 401)
        XCTAssertEqual(outcome.signed, "fresh")
        XCTAssertEqual(outcome.unanswered, .refresh, "asked again, the refresh spent")
        XCTAssertEqual(script.rejected, ["old"])
        XCTAssertEqual(script.sent.map { $0.first?.1 }, ["Bearer old", "Bearer fresh"])
    }

    func testANonceIsKeptFromAProvenAnswerAndTheRequestProvenAgainOnce() async throws {
        let asks = HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"DPoP error="use_dpop_nonce""#, "DPoP-Nonce": "n1"])
        let script = Script([asks, HTTPResponse(status: 200, headers: ["DPoP-Nonce": "n2"])])
        var state = ExchangeState()
        let outcome = try await script.exchange(proven: true).run("t", state: &state)
        XCTAssertEqual(outcome.answer.status, 200)
        XCTAssertNil(outcome.unanswered)
        XCTAssertEqual(script.kept, ["n1", "n2"], "every nonce a proven request is answered with")
        XCTAssertEqual(script.rejected, [], "a nonce asked for is not a dead token")
        XCTAssertEqual(state, ExchangeState(nonceRetried: true))
    }

    func testANonceOnAnAnswerToAnUnprovenRequestIsNotKept() async throws {
        let script = Script([HTTPResponse(status: 200, headers: ["DPoP-Nonce": "n1"])])
        var state = ExchangeState()
        _ = try await script.exchange().run("t", state: &state)
        XCTAssertEqual(script.kept, [])
    }

    func testALoginThatIsDeclinedGivesTheAnswerBackSayingWhatWasAsked() async throws {
        let script = Script([HTTPResponse(status: 401, headers: ["WWW-Authenticate": #"Bearer scope="read""#])])
        var state = ExchangeState()
        let outcome = try await script.exchange().run(nil, state: &state)
        XCTAssertEqual(outcome.answer.status, 401)
        XCTAssertNil(outcome.signed)
        XCTAssertEqual(outcome.unanswered, .logIn(BearerChallenge(scopes: ["read"])))
        XCTAssertEqual(state, ExchangeState(), "declined, nothing spent")
    }

    func testALoginResendsSignedAndA401AfterItIsRefreshedOnce() async throws {
        let script = Script([HTTPResponse(status: 401), HTTPResponse(status: 401), HTTPResponse(status: 200)])
        var state = ExchangeState()
        let outcome = try await script.exchange(logIn: "new").run(nil, state: &state)
        XCTAssertEqual(outcome.answer.status, 200)
        XCTAssertEqual(script.sent.map { $0.first?.1 }, [nil, "Bearer new", "Bearer fresh"])
        XCTAssertEqual(state, ExchangeState(refreshed: true, loggedIn: true))
    }
}
