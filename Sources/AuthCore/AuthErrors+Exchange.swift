/// The errors of the derived flows (`tokenExchange`, `idJag`): each names the step that failed in `data.step`,
/// so a host (and a person) can tell the IdP's refusal from the API's authorization server's.
extension AuthError {
    /// Which request of a derived flow failed (`data.step`).
    public enum ExchangeStep: String, Sendable, CaseIterable {
        /// RFC 8693 exchange of the subject's token (`tokenExchange`).
        case tokenExchange
        /// The ID-JAG request at the enterprise IdP (`idJag`, step a).
        case idJag
        /// The jwt-bearer grant at the API's authorization server (`idJag`, step b).
        case jwtBearer
    }

    /// The server refused `step` (1013 for the scopes, audience or resource asked for, else 1008), in its words.
    static func exchangeRefused(_ provider: ProviderConfig, _ step: ExchangeStep, _ refusal: ServerRefusal) -> AuthError {
        let shape = TokenEndpointResult.shapeRefusals.contains(refusal.error)
        var e = AuthError(shape ? .scopeNotGranted : .loginDenied,
                          "\(provider.displayName): the \(step.sentence) was refused\(saying(refusal)).", provider: provider.id).carrying(refusal)
        e.step = step.rawValue
        return e
    }

    /// `step`'s server did not answer usefully: unreachable or failing (1005, retryable), or `malformed` (1008).
    static func exchangeFailed(_ provider: ProviderConfig, _ step: ExchangeStep, _ why: String, malformed: Bool = false) -> AuthError {
        var e = malformed ? AuthError(.loginDenied, "\(provider.displayName): the \(step.sentence) got an unusable answer: \(why).", provider: provider.id)
                          : AuthError(.authServerUnavailable, "\(provider.displayName): the \(step.sentence) failed: \(why).", provider: provider.id)
        e.step = step.rawValue
        return e
    }

    /// The subject's session has no token of the kind the exchange presents (1001, about the subject's provider):
    /// a login of it gets one — with `openid` in its scopes for an ID token, a flow with refresh tokens for one.
    static func subjectTokenMissing(_ subject: ProviderConfig, _ type: SubjectTokenType, for provider: ProviderConfig) -> AuthError {
        let how = type == .idToken ? " (log in again; its scopes must include openid)" : type == .refreshToken ? " (its flow must issue refresh tokens)" : ""
        return AuthError(.notLoggedIn, "\(provider.displayName) needs a valid \(type.rawValue) of \(subject.displayName), whose session has none\(how).",
                         provider: subject.id)
    }
}

extension AuthError.ExchangeStep {
    var sentence: String {
        switch self {
        case .tokenExchange: return "token exchange"
        case .idJag: return "ID-JAG request at the identity provider"
        case .jwtBearer: return "jwt-bearer grant at the API's authorization server"
        }
    }
}
