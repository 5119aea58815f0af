import JSON

/// What a server's answer asks of the agent: the one place that reads a refusal — a resource's
/// `401` or `403` with its `WWW-Authenticate` (RFC 6750 §3, RFC 9110 §11.6.1), a DPoP nonce asked
/// for by a resource or a token endpoint (RFC 9449 §8, §9), a login wanted by an API that
/// describes itself (RFC 9728 §5.1), a step-up (MCP 2025-11-25). `Exchange` acts on its answer for
/// `fetch`, the `mcp` bridge, the DPoP token requests and userinfo; teaching the agent a new answer
/// (a challenge scheme, an error code) is a case here and its line in `ExchangeState.decide`.
///
/// A pure reading of status, headers and body: "at most once" (one refresh, one nonce, one login,
/// one step-up per request) is `ExchangeState`'s, which this cannot know.
/// `WWW-Authenticate` is read by `BearerChallenge`'s RFC 9110 parser, the only one.
enum ServerChallenge: Sendable, Equatable {
    /// Nothing the agent answers: the response goes back as it is.
    case none
    /// The token sent was refused (a `401`, with `invalid_token` or any other challenge, or none):
    /// refresh once — unless another request replaced that token already — and resend.
    case refresh
    /// The DPoP proof must carry the server's nonce, which came with the answer (`use_dpop_nonce`
    /// and a `DPoP-Nonce`): prove again with it. The token is fine, so nothing is refreshed.
    case retryWithNonce(String)
    /// A resource refused the proof, not the token (`401` with `invalid_dpop_proof`, or
    /// `use_dpop_nonce` without a nonce to use): a refresh would be spent for nothing.
    case proofRefused
    /// A request sent without a token got a `401`: a login is wanted. The `Bearer` challenge, when
    /// there is one, says where to discover what protects the resource (`resource_metadata`, `scope`).
    case discover(BearerChallenge?)
    /// A `403` with `Bearer error="insufficient_scope"`: the token lacks the scopes listed (step-up).
    case insufficientScope([String])

    /// What the request that got the answer carried: that decides what a refusal means.
    enum Request: Sendable {
        /// No token: no provider covers the URL.
        case unsigned
        /// A token that proves no key (Bearer, or any type but DPoP).
        case token
        /// A DPoP-bound token with its proof (RFC 9449 §7).
        case provenToken
        /// A token request with a proof (RFC 9449 §5). Only the nonce is read here: whether the grant
        /// was refused is `TokenEndpointResult.classify`'s (a refused proof is one of `proofRefusals`).
        case provenGrant
    }

    /// A server's refusal of a proof rather than of the grant or the token (RFC 9449 §7.1, §8).
    static let proofRefusals: Set<String> = ["invalid_dpop_proof", "use_dpop_nonce"]

    static func read(_ response: HTTPResponse, to request: Request) -> ServerChallenge {
        let status = response.status
        if request == .provenToken || request == .provenGrant {
            let code = dpopError(response)
            if code == "use_dpop_nonce", status == 400 || status == 401, let nonce = nonce(response, to: request) {
                return .retryWithNonce(nonce)
            }
            if request == .provenGrant { return .none }
            if status == 401, let code, proofRefusals.contains(code) { return .proofRefused }
        }
        switch (status, request) {
        case (401, .unsigned): return .discover(BearerChallenge.parse(response.headers["www-authenticate"] ?? ""))
        case (401, _): return .refresh
        case (403, .token), (403, .provenToken):
            guard let challenge = BearerChallenge.parse(response.headers["www-authenticate"] ?? ""),
                  challenge.error == "insufficient_scope" else { return .none }
            return .insufficientScope(challenge.scopes)
        default: return .none
        }
    }

    /// The `DPoP-Nonce` an answer to a proven request brought, kept for the next proofs to its origin
    /// whether or not the answer asks for it (RFC 9449 §8, §9: a server may turn it over on any answer).
    static func nonce(_ response: HTTPResponse, to request: Request) -> String? {
        guard request == .provenToken || request == .provenGrant, let nonce = response.headers["dpop-nonce"], !nonce.isEmpty else { return nil }
        return nonce
    }

    /// The DPoP error code of an answer, from either place RFC 9449 puts it: a `401`'s challenge
    /// (the `DPoP` one's `error`, else the first challenge's that has one), else the JSON body of a
    /// `400` or `401` (a token endpoint's, RFC 6749 §5.2).
    private static func dpopError(_ response: HTTPResponse) -> String? {
        if response.status == 401, let header = response.headers["www-authenticate"] {
            let challenges = BearerChallenge.challenges(header)
            if let error = challenges.first(where: { $0.0.lowercased() == "dpop" && $0.1["error"] != nil })?.1["error"]
                ?? challenges.lazy.compactMap({ $0.1["error"] }).first {
                return error
            }
        }
        guard response.status == 400 || response.status == 401 else { return nil }
        return (try? JSONParser.parse(response.body))?.objectValue?["error"]?.stringValue
    }
}

extension ServerChallenge.Request {
    /// What a request authorized by `credential` carried: a proof too when the token is DPoP-bound.
    init(_ credential: Credential) { self = credential.dpopKey == nil ? .token : .provenToken }
}
