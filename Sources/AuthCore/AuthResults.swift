#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// What the service's operations answer, as Swift values; `Protocol/` turns them into JSON.

public struct LoginResult: Sendable, Equatable {
    public let provider: String
    /// The account the login added or replaced.
    public let account: String
    /// Whatever the provider says about the user.
    public let user: JSONValue
    public let expiresAt: Date?

    public init(provider: String, account: String, user: JSONValue, expiresAt: Date?) {
        (self.provider, self.account, self.user, self.expiresAt) = (provider, account, user, expiresAt)
    }
}

public struct TokenResult: Sendable, Equatable {
    public let accessToken: String
    public let tokenType: String
    public let expiresAt: Date?
    /// For `token {minValidSeconds}`: whether it was refreshed first.
    public internal(set) var refreshed = false
    /// Whether `minValidSeconds` was asked, so `refreshed` is said.
    public internal(set) var askedValidity = false

    public init(accessToken: String, tokenType: String, expiresAt: Date?) {
        (self.accessToken, self.tokenType, self.expiresAt) = (accessToken, tokenType, expiresAt)
    }

    init(_ credential: Credential) {
        accessToken = credential.accessToken
        tokenType = credential.tokenType
        expiresAt = credential.expiresAt
    }
}

public struct RefreshResult: Sendable, Equatable {
    public let provider: String
    public let account: String
    /// False when the rejected token had already been replaced: nothing was sent.
    public let refreshed: Bool
    public let expiresAt: Date?

    public init(provider: String, account: String, refreshed: Bool, expiresAt: Date?) {
        (self.provider, self.account, self.refreshed, self.expiresAt) = (provider, account, refreshed, expiresAt)
    }
}

/// How to authorize one outgoing request.
public enum SignDecision: Sendable, Equatable {
    /// No provider covers the URL: send it as is.
    case unsigned
    case signed(Signature)
}

public final class Signature: Sendable, Equatable {
    public let provider: String
    public let account: String
    public let shape: TokenShape
    /// The `Authorization` header value.
    public let authorization: String
    public let expiresAt: Date?
    /// The `DPoP` header value for a DPoP-bound token (RFC 9449): a proof for this one request, so never reused.
    public let proof: String?
    /// The token signed with: what a `refresh(after:)` rejects, and what tells a replaced token.
    let issue: Credential.Issue

    convenience init(provider: String, account: String, shape: TokenShape, credential: Credential, proof: String? = nil) {
        self.init(provider: provider, account: account, shape: shape, authorization: credential.authorization,
                  expiresAt: credential.expiresAt, issue: credential.issue, proof: proof)
    }

    init(provider: String, account: String, shape: TokenShape, authorization: String, expiresAt: Date?, issue: Credential.Issue, proof: String? = nil) {
        self.provider = provider
        self.account = account
        self.shape = shape
        self.authorization = authorization
        self.expiresAt = expiresAt
        self.issue = issue
        self.proof = proof
    }

    /// Equal fields (a class, so that `sign`'s answer travels with one retain; equal as a value).
    public static func == (a: Signature, b: Signature) -> Bool {
        a === b || (a.provider == b.provider && a.account == b.account && a.shape == b.shape && a.authorization == b.authorization
            && a.expiresAt == b.expiresAt && a.proof == b.proof && a.issue == b.issue)
    }

    /// Whether both signed with the same token (nobody replaced it in between).
    public func isSameIssue(as other: Signature) -> Bool { issue == other.issue }
}

public struct ProviderStatus: Sendable, Equatable {
    public let id: String
    public let displayName: String
    /// The provider's flows; the first is the default.
    public let flows: [Flow]
    public var flow: Flow { flows[0] }
    /// What a login through the default flow asks for.
    public let fields: [LoginField]
    /// The account a request naming none would use; nil when logged out.
    public let session: LoggedIn?
    public let account: String?
    /// Every logged-in account, in login order.
    public let accounts: [Account]
    /// For a provider learned from an API's 401: its resource and issuer (`status` shows `learned: true`).
    public var learned: LearnedResource?
    /// The username git sends with the token, when configured: the command line's
    /// `git-credential` reads it here when it works through a socket agent.
    public var gitUsername: String?
    /// How an interactive login through the default flow reaches the person: `browser`,
    /// `paste` (the URL shown, its redirect pasted back: SSH without a display) or `device`.
    public var interactive: String?
    /// Accounts whose stored session this agent cannot read (a locked keyring, or
    /// one this process cannot reach) and why: their requests answer 1010.
    public var unreadable: [Unreadable] = []

    public struct Unreadable: Sendable, Equatable {
        public let account: String
        public let reason: String
    }

    public struct LoggedIn: Sendable, Equatable {
        public let user: JSONValue
        public let expiresAt: Date?
    }

    public struct Account: Sendable, Equatable {
        public let id: String
        public let user: JSONValue
        public let expiresAt: Date?
        public let isDefault: Bool
    }
}
