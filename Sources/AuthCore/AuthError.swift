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
    case notAllowed = 1015
    case configurationInvalid = 1016

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
        case .notAllowed: return "notAllowed"
        case .configurationInvalid: return "configurationInvalid"
        }
    }

    /// A server that did not answer, and a store that cannot be written, may work again
    /// without restarting the agent (the user frees the disk, repairs the directory).
    public var retryable: Bool { self == .authServerUnavailable || self == .storeUnavailable || self == .requestFailed }
}

/// An auth failure: a code, one human sentence without secrets, and the provider it concerns.
/// Shown as that sentence wherever it is interpolated (a log line, a wrapped message), never as a
/// Swift value dump (`AuthError(code: …)`).
public struct AuthError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: AuthErrorCode
    public let message: String
    public let provider: String?
    /// For 1014 `discoveryFailed`: the `LearningStep` that failed (`data.step`).
    public var step: String?
    /// The refusing server's own `error_description`, made safe (`ServerRefusal`), when it gave one
    /// (`data.serverDescription`): what it says is often the one thing that tells a person what to change.
    public var serverDescription: String?
    /// For 1016 `configurationInvalid`: the provider's configuration key to fix (`data.configKey`):
    /// the server's answer shows the configuration is wrong, so retrying or logging in again cannot help.
    public var configKey: String?
    /// The refusing server's `error` code (`invalid_client`…), for the core's own decisions on it
    /// (`AuthService.saysClientUnknown`); never parsed back out of `message`.
    var serverError: String?

    /// Sources build errors through the named constructors of `AuthErrors*.swift`, where each
    /// code's wording lives; this stays public (Swift has no access level for a set of files)
    /// for those files, for tests that spell out the error they expect, and for nothing else.
    public init(_ code: AuthErrorCode, _ message: String, provider: String? = nil) {
        self.code = code
        self.message = message
        self.provider = provider
    }

    public var description: String { message }

    /// Equal when a host sees the same error (`serverError` is the core's, never shown).
    public static func == (a: AuthError, b: AuthError) -> Bool {
        (a.code, a.message, a.provider, a.step, a.serverDescription, a.configKey) == (b.code, b.message, b.provider, b.step, b.serverDescription, b.configKey)
    }

    /// This error with `refusal`'s description as `serverDescription`; for the named constructors.
    func carrying(_ refusal: ServerRefusal?) -> AuthError {
        var e = self
        e.serverDescription = refusal?.description
        e.serverError = refusal?.error
        return e
    }
}
