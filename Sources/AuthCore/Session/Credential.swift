#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A token as a request uses it: an account's own or one of its shaped tokens.
struct Credential: Sendable, TokenLifetime {
    let accessToken: String
    let tokenType: String
    let authorization: String
    let expiresAt: Date?
    let obtainedAt: Date
    /// The session's generation, for `sign`'s answer cache.
    let generation: Int

    init(_ session: Session, authorization: String) {
        accessToken = session.accessToken
        tokenType = session.tokenType
        self.authorization = authorization
        expiresAt = session.expiresAt
        obtainedAt = session.obtainedAt
        generation = session.generation
    }

    init(_ token: ShapedToken, generation: Int) {
        accessToken = token.accessToken
        tokenType = token.tokenType
        authorization = token.authorization
        expiresAt = token.expiresAt
        obtainedAt = token.obtainedAt
        self.generation = generation
    }
}
