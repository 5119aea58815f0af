#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// What the service's operations answer, as Swift values; `Protocol/` turns them into JSON.

public struct LoginResult: Sendable, Equatable {
    public let provider: String
    /// Whatever the provider says about the user.
    public let user: JSONValue
    public let expiresAt: Date?
}

public struct TokenResult: Sendable, Equatable {
    public let accessToken: String
    public let tokenType: String
    public let expiresAt: Date?
}

public struct RefreshResult: Sendable, Equatable {
    public let provider: String
    /// False when the rejected token had already been replaced: nothing was sent.
    public let refreshed: Bool
    public let expiresAt: Date?
}

/// How to authorize one outgoing request.
public enum SignDecision: Sendable, Equatable {
    /// No provider covers the URL: send it as is.
    case unsigned
    case signed(Signature)
}

public struct Signature: Sendable, Equatable {
    public let provider: String
    /// The `Authorization` header value.
    public let authorization: String
    public let expiresAt: Date?
    /// The session's generation: the same generation and authorization mean the same answer.
    public let generation: Int
}

public struct ProviderStatus: Sendable, Equatable {
    public let id: String
    public let displayName: String
    public let flow: Flow
    public let fields: [LoginField]
    /// nil when logged out.
    public let session: LoggedIn?

    public struct LoggedIn: Sendable, Equatable {
        public let user: JSONValue
        public let expiresAt: Date?
    }
}
