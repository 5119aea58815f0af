import JSON

/// The application error codes of the protocol, with the `data.reason` a host
/// switches on and whether retrying the same call can succeed.
public enum AuthErrorCode: Int, CaseIterable, Sendable {
    case notLoggedIn = 1001
    case unknownProvider = 1002
    case invalidCredentials = 1003
    case sessionExpired = 1004
    case authServerUnavailable = 1005
    case originNotAllowed = 1006
    case excessiveRefresh = 1007
    case loginDenied = 1008
    case loginTimedOut = 1009
    case storeUnavailable = 1010
    case requestFailed = 1011
    case responseTooLarge = 1012
    case scopeNotGranted = 1013
    case discoveryFailed = 1014

    public var reason: String {
        switch self {
        case .notLoggedIn: return "notLoggedIn"
        case .unknownProvider: return "unknownProvider"
        case .invalidCredentials: return "invalidCredentials"
        case .sessionExpired: return "sessionExpired"
        case .authServerUnavailable: return "authServerUnavailable"
        case .originNotAllowed: return "originNotAllowed"
        case .excessiveRefresh: return "excessiveRefresh"
        case .loginDenied: return "loginDenied"
        case .loginTimedOut: return "loginTimedOut"
        case .storeUnavailable: return "storeUnavailable"
        case .requestFailed: return "requestFailed"
        case .responseTooLarge: return "responseTooLarge"
        case .scopeNotGranted: return "scopeNotGranted"
        case .discoveryFailed: return "discoveryFailed"
        }
    }

    /// A server that did not answer, and a store that cannot be written, may work again
    /// without restarting the agent (the user frees the disk, repairs the directory).
    public var retryable: Bool { self == .authServerUnavailable || self == .storeUnavailable || self == .requestFailed }
}

/// An auth failure: a code, one human sentence without secrets, and the provider it concerns.
public struct AuthError: Error, Sendable, Equatable {
    public let code: AuthErrorCode
    public let message: String
    public let provider: String?
    /// For 1014 `discoveryFailed`: the `LearningStep` that failed (`data.step`).
    public var step: String?

    public init(_ code: AuthErrorCode, _ message: String, provider: String? = nil) {
        self.code = code
        self.message = message
        self.provider = provider
    }

    /// The auth server of `provider` could not be reached or failed; retryable.
    static func unavailable(_ provider: ProviderConfig, _ why: String) -> AuthError {
        AuthError(.authServerUnavailable, "\(provider.displayName) is unavailable: \(why).", provider: provider.id)
    }


    /// The server refused the scopes, audience or resource a request asked for
    /// (`invalid_scope`, `invalid_target`); `why` is its error and description as
    /// one sanitised line. Not retryable (the same request gets the same answer),
    /// and the account stays logged in.
    static func scopeNotGranted(_ provider: ProviderConfig, _ shape: TokenShape = .none, _ why: String) -> AuthError {
        let what = shape.isNone ? "the requested scopes, audience or resource" : "a token for \(shape)"
        return AuthError(.scopeNotGranted, "\(provider.displayName) did not grant \(what) (\(why)).", provider: provider.id)
    }

    /// The session store of `provider` cannot be used; `problem` says why and names the path.
    static func storeUnavailable(_ provider: ProviderConfig, _ problem: Error) -> AuthError {
        let detail: String
        switch problem as? SessionStoreError {
        case .io(let message)?: detail = message
        default: detail = "\(problem)"
        }
        return AuthError(.storeUnavailable, "The session store cannot be used for \(provider.displayName): \(detail).", provider: provider.id)
    }

    /// The server's answer to a login or refresh could not be used, and asking
    /// again would get the same answer: not retryable, and the message names the problem.
    static func malformedResponse(_ provider: ProviderConfig, _ problem: String) -> AuthError {
        AuthError(.loginDenied, "\(provider.displayName) sent an unusable answer: \(problem).", provider: provider.id)
    }
}
