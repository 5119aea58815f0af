import Wire

/// Authorization codes (RFC 6749 §4.1.2) awaiting exchange at the token
/// endpoint, as a plain table that `IssuerState` keeps behind its lock.
///
/// A code is single-use and lives 60 s. A redeemed code stays in the table
/// with the token family it produced, so a second redemption can be recognized
/// as the replay of an intercepted code and that family revoked (RFC 6749 §4.1.2).
struct AuthorizationCodes {
    struct Record {
        let clientID: String
        let username: String
        let redirectURI: String
        let codeChallenge: String?
        let scope: String?
        /// The authorization request's `nonce`, for the ID token (OIDC Core §3.1.2.1).
        let nonce: String?
        /// The authorization request's RFC 8707 `resource`, which the tokens are then bound to.
        let resource: String?
        /// RFC 9449 §10: the `dpop_jkt` of the authorization request; the code grant must prove that key.
        var dpopJkt: String? = nil
        let expiresAt: Double
        /// The family of the tokens issued for this code, once redeemed.
        var redeemedFamily: Int? = nil
    }

    /// Seconds from issue to expiry.
    static let lifetime = 60.0

    /// What presenting a code establishes, before any tokens are minted.
    enum Check {
        case valid(Record)
        /// Already redeemed: the tokens of `family` must be revoked.
        case replayed(family: Int)
        case invalid(String)
    }

    private var records: [String: Record] = [:]

    mutating func issue(_ record: Record) -> String {
        let code = SecureRandom.token(bytes: 32)
        records[code] = record
        return code
    }

    /// RFC 6749 §4.1.3 and RFC 7636 §4.6: the code must be unused, unexpired, issued
    /// to this client for this redirect URI, and the verifier must match the challenge.
    func check(code: String, clientID: String, redirectURI: String?, verifier: String?, now: Double) -> Check {
        guard let record = records[code] else { return .invalid("unknown authorization code") }
        if let family = record.redeemedFamily { return .replayed(family: family) }
        guard now < record.expiresAt else { return .invalid("the authorization code has expired") }
        guard record.clientID == clientID else { return .invalid("the authorization code was issued to another client") }
        guard redirectURI == record.redirectURI else {
            return .invalid("redirect_uri does not match the one in the authorization request")
        }
        if let bound = record.dpopJkt, bound != DPoPBinding.proven {
            return .invalid("the authorization code is bound (dpop_jkt) to a key this request's DPoP proof does not prove")
        }
        switch (record.codeChallenge, verifier) {
        case (nil, nil):
            break
        case (nil, .some):
            return .invalid("code_verifier sent, but the authorization request had no code_challenge")
        case (.some, nil):
            return .invalid("code_verifier is required")
        case (.some(let challenge), .some(let verifier)):
            guard PKCE.verify(verifier: verifier, challenge: challenge) else {
                return .invalid("code_verifier does not match the code_challenge")
            }
        }
        return .valid(record)
    }

    mutating func markRedeemed(_ code: String, family: Int) {
        records[code]?.redeemedFamily = family
    }
}
