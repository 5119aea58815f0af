#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// One way of logging in, refreshing and logging out — a flow bound to a
/// provider's configuration. The session state machine above it is the same
/// for every flow; only these calls differ.
public protocol LoginProvider: Sendable {
    var config: ProviderConfig { get }
    /// Exchanges credentials (or an interactive approval, announced through
    /// `context`) for a session. Throws `invalidCredentials` when the server
    /// rejects them, `authServerUnavailable` on transient failure, `loginDenied`
    /// when its answer cannot be used (malformed, an unsendable or expired token).
    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session
    /// Obtains a fresh session from the current one; for a `shape` other than
    /// `.none`, a session whose access token has that shape (same refresh token,
    /// or the one the server rotated to). `.unsupported` when the flow cannot.
    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome
    /// Tells the server the session is over; true when it confirmed.
    func revoke(_ session: Session) async -> Bool
}

/// What a refresh attempt came to; the account session decides what it means for the user.
public enum RefreshOutcome: Sendable, Equatable {
    case refreshed(Session)
    /// The server no longer accepts the session (e.g. `invalid_grant`), in its words.
    case rejected(ServerRefusal)
    /// Network trouble, a 5xx: try again later.
    case transient(String)
    /// The server answered with something that is not a usable session (see
    /// `TokenEndpointResult.malformed`). Not the session's fault, so it is kept;
    /// not transient either, so the caller is not told to retry.
    case malformed(String)
    /// The server refused the scopes, audience or resource asked for
    /// (`invalid_scope`, `invalid_target`), in its words. Not the session's
    /// fault (it stays), and asking again would get the same answer.
    case notGranted(ServerRefusal)
    /// The flow has no way to refresh (a static token, a session API without
    /// `refreshEndpoint`, a session without refresh token), or to shape a token.
    case unsupported
    /// A derived flow's renewal failed with its own error (naming the step: `AuthErrors+Exchange.swift`), given as
    /// it stands; the session is kept — it holds no grant the server could have ended, only the last token made.
    case failed(AuthError)
}
