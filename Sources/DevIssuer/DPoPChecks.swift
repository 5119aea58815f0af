import JSON

/// The key a token request proved, for the grant it leads to: `IssuerState.mintGrant`
/// binds what it mints to it (`cnf.jkt`). A task-local because the grants are
/// handled by several types that need not know about DPoP.
enum DPoPBinding {
    @TaskLocal static var jkt: String?
    /// The key the request's proof proved, also when a fault makes the answer Bearer: what a
    /// code's `dpop_jkt` is compared with (RFC 9449 §10).
    @TaskLocal static var proven: String?
}

/// Where the issuer enforces DPoP (RFC 9449): the token endpoint (§5, §8) and the
/// resources that accept its access tokens (§7, §9).
enum DPoPChecks {
    /// A token request: the thumbprint to bind the grant to (nil: no proof, or an
    /// "answer Bearer" fault), or the refusal to answer with. A refresh token bound
    /// to a key needs a proof by that key — checked before the grant is touched,
    /// so a refused proof never spends the refresh token.
    static func tokenRequest(_ request: HTTPRequest, _ context: RouteContext, refreshToken: String?) -> Outcome<(bind: String?, proven: String?)> {
        let bound = refreshToken.flatMap { context.state.dpopBinding(ofRefreshToken: $0) }
        let proofs = request.headers.values("dpop")
        guard !proofs.isEmpty else {
            if bound != nil { return .failure(refusal(400, "invalid_dpop_proof", "the refresh token is bound to a DPoP key: a proof is required", context)) }
            return .success((nil, nil))
        }
        guard proofs.count == 1 else { return .failure(refusal(400, "invalid_dpop_proof", "more than one DPoP header", context)) }
        let proof: DPoPVerifier.Proof
        switch check(proofs[0], request, accessToken: nil, context) {
        case .failure(let refused): return .failure(refused.asTokenError(context))
        case .success(let valid): proof = valid
        }
        if let bound, bound != proof.jkt {
            return .failure(refusal(400, "invalid_dpop_proof", "the refresh token is bound to another key", context))
        }
        if bound == nil, context.state.dpop.takeBearerAnswer() { return .success((nil, proof.jkt)) }
        return .success((proof.jkt, proof.jkt))
    }

    /// The access token a resource request carries: `DPoP <token>` with a valid proof
    /// by the key the token is bound to, or `Bearer <token>` for an unbound token.
    static func accessToken(_ request: HTTPRequest, _ context: RouteContext) -> Outcome<String> {
        if let token = request.authorization(scheme: "DPoP") {
            let proofs = request.headers.values("dpop")
            guard proofs.count == 1 else { return .failure(refusal(401, "invalid_dpop_proof", "exactly one DPoP header is required", context)) }
            switch check(proofs[0], request, accessToken: token, context) {
            case .failure(let refused): return .failure(refused.asResourceError(context))
            case .success(let proof):
                guard let bound = context.state.dpopBinding(ofAccessToken: token) else {
                    return .failure(refusal(401, "invalid_token", "the access token is not DPoP-bound", context))
                }
                guard bound == proof.jkt else { return .failure(refusal(401, "invalid_token", "the access token is bound to another key", context)) }
                return .success(token)
            }
        }
        guard let token = request.bearerToken else {
            return .failure(HTTPResponse.error(401, "invalid_request", "missing bearer token", headers: [("WWW-Authenticate", "Bearer")]))
        }
        if context.state.dpopBinding(ofAccessToken: token) != nil {
            return .failure(refusal(401, "invalid_token", "a DPoP-bound token needs the DPoP scheme and a proof", context))
        }
        return .success(token)
    }

    /// What a check came to: go on with `Value`, or answer with the refusal.
    enum Outcome<Value> {
        case success(Value)
        case failure(HTTPResponse)
    }

    private enum Refused: Error {
        case invalid(String)
        case needsNonce(String)

        func asTokenError(_ context: RouteContext) -> HTTPResponse {
            switch self {
            case .invalid(let why): return refusal(400, "invalid_dpop_proof", why, context)
            case .needsNonce: return refusal(400, "use_dpop_nonce", "a DPoP nonce is required", context)
            }
        }

        func asResourceError(_ context: RouteContext) -> HTTPResponse {
            switch self {
            case .invalid(let why): return refusal(401, "invalid_dpop_proof", why, context)
            case .needsNonce: return refusal(401, "use_dpop_nonce", "a DPoP nonce is required", context)
            }
        }
    }

    private static func check(_ text: String, _ request: HTTPRequest, accessToken: String?, _ context: RouteContext) -> Result<DPoPVerifier.Proof, Refused> {
        // The URL the client used: its Host (127.0.0.1 or localhost) and the path; servers compare htu as a string.
        let base = request.headers.value("host").map { "http://\($0)" } ?? context.issuer
        switch DPoPVerifier.verify(text, method: request.method, url: base + request.path, accessToken: accessToken, now: context.now) {
        case .failure(let why): return .failure(.invalid(why.description))
        case .success(let proof):
            switch context.state.dpop.admit(proof) {
            case .admitted: return .success(proof)
            case .refused(let why): return .failure(.invalid(why))
            case .needsNonce(let nonce): return .failure(.needsNonce(nonce))
            }
        }
    }

    /// An error as RFC 9449 answers it: a JSON body at the token endpoint (400), a
    /// `WWW-Authenticate: DPoP` challenge at a resource (401); the current nonce
    /// in `DPoP-Nonce` whenever nonces are mandatory.
    private static func refusal(_ status: Int, _ code: String, _ description: String, _ context: RouteContext) -> HTTPResponse {
        var headers: [(name: String, value: String)] = []
        if status == 401 { headers.append(("WWW-Authenticate", "DPoP algs=\"ES256\", error=\"\(code)\"")) }
        if let nonce = context.state.dpop.currentNonce { headers.append(("DPoP-Nonce", nonce)) }
        return .error(status, code, description, headers: headers)
    }
}
