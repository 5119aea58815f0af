#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A token as a request uses it: an account's own or one of its shaped tokens.
/// A class, immutable: `sign`'s hot path hands it along (session snapshot, decision,
/// signature) with one retain instead of one per string.
final class Credential: Sendable, TokenLifetime {
    let accessToken: String
    let tokenType: String
    let authorization: String
    let expiresAt: Date?
    let obtainedAt: Date
    /// The key every request with this token must prove (RFC 9449): set for a DPoP-bound token only.
    let dpopKey: DPoPKey?
    /// `sign`'s signature with this token, unshaped and without a proof, made once: set for the
    /// token of an account session's snapshot (`signedAs`), so a plain `sign` allocates nothing.
    let plainSignature: Signature?

    init(_ session: Session, authorization: String, signedAs owner: (provider: String, account: String)? = nil) {
        accessToken = session.accessToken
        tokenType = session.tokenType
        self.authorization = authorization
        expiresAt = session.expiresAt
        obtainedAt = session.obtainedAt
        dpopKey = session.tokenType == "DPoP" ? session.dpopKey : nil
        plainSignature = owner.map { Signature(provider: $0.provider, account: $0.account, shape: .none, authorization: authorization,
                                               expiresAt: session.expiresAt, issue: Issue(accessToken: session.accessToken, obtainedAt: session.obtainedAt)) }
    }

    /// A shaped token of `session`: bound, when DPoP, to the session's key (the refresh that got it proved that key).
    init(_ token: ShapedToken, of session: Session) {
        accessToken = token.accessToken
        tokenType = token.tokenType
        authorization = token.authorization
        expiresAt = token.expiresAt
        obtainedAt = token.obtainedAt
        dpopKey = token.tokenType == "DPoP" ? session.dpopKey : nil
        plainSignature = nil
    }
}

extension Credential {
    /// Which token a credential is — its value and when it was obtained — so "was the token a server
    /// rejected replaced meanwhile?" compares what the account holds, never header strings.
    struct Issue: Sendable, Equatable {
        let accessToken: String
        let obtainedAt: Date
    }

    var issue: Issue { Issue(accessToken: accessToken, obtainedAt: obtainedAt) }
}

extension Session {
    /// The token a host's `failedAuthorization` names — its `Authorization` value, or the bare token
    /// that git and kubectl hand back — among those the session holds, with its shape; nil when the
    /// session holds none of them (it was replaced). The one place a host's string names a token.
    func credential(named failed: String) -> (TokenShape, Credential)? {
        if failed == authorization || failed == accessToken { return (.none, Credential(self, authorization: authorization)) }
        guard let token = shaped.first(where: { $0.authorization == failed || $0.accessToken == failed }) else { return nil }
        return (token.shape, Credential(token, of: self))
    }

    /// The token of `shape` as a request uses it: the session's own for `.none`, else its
    /// shaped token of `shape`, if it has one.
    func credential(_ shape: TokenShape) -> Credential? {
        if shape.isNone { return Credential(self, authorization: authorization) }
        return token(for: shape).map { Credential($0, of: self) }
    }
}
