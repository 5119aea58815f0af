#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// A change of login state that hosts may subscribe to.
public enum AuthEvent: Sendable, Equatable {
    case loggedIn(provider: String, account: String, user: JSONValue, expiresAt: Date?)
    case loggedOut(provider: String, account: String, reason: LogoutReason)
    case tokenRefreshed(provider: String, account: String, expiresAt: Date?)
    /// The set of providers changed: APIs learned or forgotten, here or by another process
    /// sharing the store — or `changed`: a learned API whose resource moved to another
    /// authorization server, logged in there afresh. Only ids: what `status` shows of them
    /// depends on the host's selections, so a host that shows providers asks `status` again.
    case providersChanged(added: [String], removed: [String], changed: [String] = [])

    public enum Name: String, CaseIterable, Sendable {
        case userLoggedIn, userLoggedOut, tokenRefreshed, providersChanged
    }

    /// Why a session ended: the host asked, the server stopped accepting it,
    /// another agent sharing the store logged out, or — for a derived flow's
    /// provider (`tokenExchange`, `idJag`) — the provider it comes from was logged out.
    public enum LogoutReason: String, Sendable, CaseIterable {
        case logout, expired, external, subjectLoggedOut
    }

    public var name: Name {
        switch self {
        case .loggedIn: return .userLoggedIn
        case .loggedOut: return .userLoggedOut
        case .tokenRefreshed: return .tokenRefreshed
        case .providersChanged: return .providersChanged
        }
    }

    /// The provider an account's event is about; nil for `providersChanged`, which is about
    /// the set of providers, so a subscription's `providers` filter does not hold it back.
    public var provider: String? {
        switch self {
        case .loggedIn(let p, _, _, _), .loggedOut(let p, _, _), .tokenRefreshed(let p, _, _): return p
        case .providersChanged: return nil
        }
    }

    public var account: String? {
        switch self {
        case .loggedIn(_, let a, _, _), .loggedOut(_, let a, _), .tokenRefreshed(_, let a, _): return a
        case .providersChanged: return nil
        }
    }

    /// The notification's params.
    public var params: JSONValue {
        switch self {
        case .loggedIn(let p, let a, let user, let expiresAt):
            return ["provider": .string(p), "account": .string(a), "user": user, "expiresAt": RFC3339.json(expiresAt)]
        case .loggedOut(let p, let a, let reason):
            return ["provider": .string(p), "account": .string(a), "reason": .string(reason.rawValue)]
        case .tokenRefreshed(let p, let a, let expiresAt):
            return ["provider": .string(p), "account": .string(a), "expiresAt": RFC3339.json(expiresAt)]
        case .providersChanged(let added, let removed, let changed):
            return ["added": .array(added.map { .string($0) }), "removed": .array(removed.map { .string($0) }),
                    "changed": .array(changed.map { .string($0) })]
        }
    }
}

extension RFC3339 {
    /// An expiry as the protocol writes it: a UTC time, or null when unknown or never.
    public static func json(_ date: Date?) -> JSONValue {
        guard let date else { return .null }
        return .string(format(date))
    }
}
