#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking

/// What a derived flow's provider asks of the service whose providers it sits among: the token of its subject's
/// session (refreshed, or the subject logged in, as `AuthService.subjectToken` decides), and the subject's OAuth
/// client for requests at its server. Bound to the service once it is made (the flows are made first); weakly, as
/// the service owns the flows.
final class SubjectTokens: Sendable {
    private struct Bound: Sendable { weak var service: AuthService? }
    private let bound = Locked(Bound())

    func bind(_ service: AuthService) { bound.withLock { $0.service = service } }

    var service: AuthService? { bound.current.service }

    /// The subject's token of `type`; with `context`, a subject nobody is logged in to is logged in first (an explicit
    /// login of the derived provider), else that is the error.
    func token(of provider: ProviderConfig, _ type: SubjectTokenType, from: String, login context: LoginContext?) async throws(AuthError) -> SubjectToken {
        guard let service else { throw AuthError.unavailable(provider, "auth-agent is shutting down") }
        return try await service.subjectToken(for: provider, type, from: from, login: context)
    }

    /// The subject provider's OAuth client: its server and its client authentication.
    func client(of from: String, for provider: ProviderConfig) throws(AuthError) -> OAuthClient {
        guard let service else { throw AuthError.unavailable(provider, "auth-agent is shutting down") }
        return try service.subjectClient(from)
    }
}

/// A subject's token as an exchange presents it, with what the derived session records of where it came from.
struct SubjectToken: Sendable {
    let presented: TokenExchange.Presented
    /// Who the subject's session is: the derived session's user (so its account is the subject's).
    let user: JSONValue?
    /// The subject session's generation: a derived token made from an older one is exchanged again.
    let generation: Int
}

/// The derived flows log in and renew alike: by making the token again from the subject's session (`obtain`), the
/// subject logged in first only for a login someone asked for; a renewal that fails keeps its error, step and all.
protocol DerivedLoginProvider: OAuthLoginProvider {
    func obtain(_ shape: TokenShape, login: LoginContext?) async throws(AuthError) -> Session
}

extension DerivedLoginProvider {
    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        try await obtain(.none, login: context.logsInSubject ? context : nil)
    }

    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome {
        do throws(AuthError) {
            return .refreshed(try await obtain(shape, login: nil))
        } catch {
            return .failed(error)
        }
    }
}
