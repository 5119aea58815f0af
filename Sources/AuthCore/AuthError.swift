import JSON
import JSONRPC

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
        }
    }

    public var retryable: Bool { self == .authServerUnavailable || self == .requestFailed || self == .storeUnavailable }
}

/// An auth failure: a code, one human sentence without secrets, and the provider it concerns.
public struct AuthError: Error, Sendable, Equatable {
    public let code: AuthErrorCode
    public let message: String
    public let provider: String?

    public init(_ code: AuthErrorCode, _ message: String, provider: String? = nil) {
        self.code = code
        self.message = message
        self.provider = provider
    }

    /// The auth server of `provider` could not be reached or failed; retryable.
    static func unavailable(_ provider: ProviderConfig, _ why: String) -> AuthError {
        AuthError(.authServerUnavailable, "\(provider.displayName) is unavailable: \(why).", provider: provider.id)
    }

    /// A failure that says nothing about the session (the server or the store
    /// will likely recover; the refresh limit will pass): a still-valid token stays usable.
    var isPassing: Bool { code.retryable || code == .excessiveRefresh }

    public var rpcError: RPCError {
        var data: JSONObject = ["reason": .string(code.reason), "retryable": .bool(code.retryable)]
        if let provider { data["provider"] = .string(provider) }
        return RPCError(code: code.rawValue, message: message, data: .object(data))
    }
}
