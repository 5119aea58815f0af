/// One request's attempts — sign, send, read the answer (`ServerChallenge`), and act on it at most
/// once per kind — in the shape of httpx's `auth_flow` or Alamofire's `AuthenticationInterceptor`.
/// `fetch`, the `mcp` bridge, DPoP token requests and the userinfo call drive it; none of them reads
/// a challenge itself. Teaching the agent a new answer is a case of `ServerChallenge` and its line in
/// `ExchangeState.decide`; what a caller does about it is one of `Exchange`'s closures.
///
/// Plain `sign` never comes here: it sends nothing.

/// What an answer makes a request do next, given what it has spent (`ExchangeState.decide`).
enum ExchangeStep: Sendable, Equatable {
    /// Nothing asked: the answer goes back as it is.
    case done
    /// Prove again with the nonce the answer brought (already kept for the origin); same token.
    case resendWithNonce
    /// The credential sent was rejected: renew it (one refresh, none when it was replaced already) and resend.
    case refresh
    /// An unsigned request was refused: log in to what protects the resource, then resend signed.
    case logIn(BearerChallenge?)
    /// The token lacks these scopes (`403 insufficient_scope`): log in again for them, then resend.
    case stepUp([String])
    /// The answer asks for this step, but the request spent its one already: the answer goes back.
    indirect case spent(ExchangeStep)
}

/// What one request has spent: one refresh, one login, two step-ups (a request that needed a login
/// may then need more scopes, and a resource may ask for them in two rounds — MCP 2026-07-28 bounds
/// the retries, each with the union of the scopes asked so far), and one nonce retry for each
/// credential it sends (a refresh at the token endpoint may turn the origin's nonce over).
struct ExchangeState: Sendable, Equatable {
    var refreshed = false
    var loggedIn = false
    var stepUps = 0
    var nonceRetried = false

    /// The step-ups one request may take.
    static let stepUpLimit = 2

    /// Whether the request has taken every step-up it may.
    var stepUpsSpent: Bool { stepUps >= Self.stepUpLimit }

    /// The decision on a classified answer: pure, the table `ExchangeTests` checks.
    func decide(_ challenge: ServerChallenge) -> ExchangeStep {
        switch challenge {
        case .none, .proofRefused: return .done
        case .retryWithNonce: return nonceRetried ? .spent(.resendWithNonce) : .resendWithNonce
        case .refresh: return refreshed ? .spent(.refresh) : .refresh
        case .discover(let challenge): return loggedIn ? .spent(.logIn(challenge)) : .logIn(challenge)
        case .insufficientScope(let scopes): return stepUpsSpent ? .spent(.stepUp(scopes)) : .stepUp(scopes)
        }
    }

    /// The budget after taking `step`; a new credential gets its own nonce retry.
    mutating func take(_ step: ExchangeStep) {
        switch step {
        case .done, .spent: break
        case .resendWithNonce: nonceRetried = true
        case .refresh: (refreshed, nonceRetried) = (true, false)
        case .logIn: (loggedIn, nonceRetried) = (true, false)
        case .stepUp: (stepUps, nonceRetried) = (stepUps + 1, false)
        }
    }
}

/// The driver: the caller says how to sign, send and renew; the exchange decides when. `Signed` is
/// what authorizes an attempt (a `Credential`, a DPoP key, the bridge's signing) and identifies the
/// rejected one to `refresh` — never a header string. `Answer` is a whole response or a streamed one.
struct Exchange<Signed, Answer> {
    /// What a request authorized by `signed` (nil: unsigned) carries, for `ServerChallenge.read`.
    var carries: (Signed?) -> ServerChallenge.Request
    /// The headers of one attempt.
    var sign: (Signed?) async throws -> [(String, String)]
    var send: ([(String, String)]) async throws -> Answer
    /// The status and headers of an answer (a streamed one's head: its body is not waited for).
    var head: (Answer) -> HTTPResponse
    /// Keeps a `DPoP-Nonce` a proven request was answered with, for the next proofs to the origin (RFC 9449 §9).
    var keepNonce: (String) -> Void
    /// The same token signed anew for a resend with the nonce just kept: for a `Signed` that carries
    /// its proof (the bridge's `sign` answer); others make the proof in `sign` and keep `Signed` as is.
    var prove: (Signed) async throws -> Signed = { $0 }
    /// Lets go of an answer that will not be returned (drains a stream), before a renewal that may take minutes.
    var setAside: (Answer) async -> Void = { _ in }
    /// The credential to resend with after `rejected` was refused; nil gives the answer back.
    var refresh: (_ rejected: Signed) async throws -> Signed? = { _ in nil }
    /// A login for an unsigned request's refusal; nil gives the answer back.
    var logIn: (BearerChallenge?) async throws -> Signed? = { _ in nil }
    /// A step-up for the scopes asked, after `rejected` lacked them; nil gives the answer back.
    var stepUp: (_ scopes: [String], _ rejected: Signed) async throws -> Signed? = { _, _ in nil }

    /// The final answer, the credential it was sent with, and what it asked that was not done (spent
    /// or declined), for the caller to report (a login hint). A caller that sets answers aside must not
    /// decline after doing so: the answer it would get back is drained.
    struct Outcome {
        var answer: Answer
        var signed: Signed?
        var unanswered: ExchangeStep?
    }

    func run(_ first: Signed?, state: inout ExchangeState) async throws -> Outcome {
        var signed = first
        while true {
            let request = carries(signed)
            let answer = try await send(try await sign(signed))
            let response = head(answer)
            if let nonce = ServerChallenge.nonce(response, to: request) { keepNonce(nonce) }
            let step = state.decide(ServerChallenge.read(response, to: request))
            let next: Signed?
            switch step {
            case .done: return Outcome(answer: answer, signed: signed)
            case .spent(let asked): return Outcome(answer: answer, signed: signed, unanswered: asked)
            case .resendWithNonce:
                guard let same = signed else { return Outcome(answer: answer, signed: signed) }
                await setAside(answer)
                next = try await prove(same)
            case .refresh:
                guard let rejected = signed else { return Outcome(answer: answer, signed: signed) }
                await setAside(answer)
                next = try await refresh(rejected)
            case .logIn(let challenge):
                await setAside(answer)
                next = try await logIn(challenge)
            case .stepUp(let scopes):
                guard let rejected = signed else { return Outcome(answer: answer, signed: signed) }
                await setAside(answer)
                next = try await stepUp(scopes, rejected)
            }
            guard let next else { return Outcome(answer: answer, signed: signed, unanswered: step) }
            state.take(step)
            signed = next
        }
    }
}
