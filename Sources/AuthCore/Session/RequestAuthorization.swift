import ES256

/// The headers that authorize one request with a token — `Authorization`, and for a DPoP-bound
/// token a proof of this one request (RFC 9449 §7: `htm`, `htu`, `ath`, the origin's nonce) — made
/// here only: for `sign`'s answer (and through it the `mcp` bridge and `auth-agent header`), for
/// each hop and nonce retry of `fetch`, and for the userinfo call after a login. A credential
/// kind whose headers depend on the request changes these functions alone.
///
/// A token bound to no key gets the same headers for every request: that is what lets `sign`'s
/// fast path serve its cached answer (`SignAnswers`) for it; a proof is never cached.
extension Credential {
    /// `Authorization`, then `DPoP` for a DPoP-bound token, for one `method` request to `url`.
    func authorize(method: String, url: String, clock: Clock, nonces: DPoPNonces) throws(P256Key.Unavailable) -> [(String, String)] {
        Self.headers(authorization: authorization, proof: try proof(method: method, url: url, clock: clock, nonces: nonces))
    }

    /// The proof for one `method` request to `url`; nil for a token bound to no key, which then
    /// reads neither the clock nor the nonces (`sign`'s fast path).
    func proof(method: String, url: String, clock: Clock, nonces: DPoPNonces) throws(P256Key.Unavailable) -> String? {
        guard let key = dpopKey else { return nil }
        return try Self.proof(key, accessToken: accessToken, method: method, url: url, clock: clock, nonces: nonces)
    }

    /// The proof of `key` for one request with `accessToken`, with the nonce the origin gave last.
    static func proof(_ key: DPoPKey, accessToken: String, method: String, url: String, clock: Clock,
                      nonces: DPoPNonces) throws(P256Key.Unavailable) -> String {
        try key.proof(method: method, url: url, at: clock.now(), accessToken: accessToken, nonce: nonces.nonce(for: url))
    }

    /// The `Authorization` value of a token: its type, a space, the token (RFC 6750 §2.1, RFC 9449 §7.1).
    /// Formatted here only, so every request, refresh and userinfo call sends the same value the
    /// `refresh` method's `failedAuthorization` is compared with.
    static func authorization(tokenType: String, accessToken: String) -> String { "\(tokenType) \(accessToken)" }

    /// The header fields of an `Authorization` value and a proof, in the order they are sent.
    static func headers(authorization: String, proof: String?) -> [(String, String)] {
        [("Authorization", authorization)] + (proof.map { [("DPoP", $0)] } ?? [])
    }
}

extension Signature {
    /// The header fields of this `sign` answer: `Authorization`, then `DPoP` when there is a proof.
    public var headers: [(String, String)] { Credential.headers(authorization: authorization, proof: proof) }
}

extension AuthService {
    /// A `sign` answer; a DPoP-bound token gets a fresh proof for this method and URL (never cached).
    func signature(_ p: ProviderAccounts, _ c: AccountSession, _ shape: TokenShape, _ credential: Credential,
                           method: String, url: String) throws(AuthError) -> Signature {
        if let plain = credential.plainSignature, credential.dpopKey == nil, shape.isNone, plain.provider == p.id, plain.account == c.account {
            return plain  // the answer of nearly every `sign`, made once per session
        }
        let proof: String?
        do {
            proof = try credential.proof(method: method, url: url, clock: clock, nonces: nonces)
        } catch {
            throw AuthError.unavailable(c.config, error.description)
        }
        return Signature(provider: p.id, account: c.account, shape: shape, credential: credential, proof: proof)
    }
}
