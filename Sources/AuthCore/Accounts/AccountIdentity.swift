import JSON

/// Which account a session belongs to: a stable id the server gives the
/// identity, so that logging in again as the same user replaces that user's
/// session and logging in as someone else adds an account.
///
/// The first of the user object's members that servers use for it: `sub`
/// (userinfo and ID-token claims), `id` (a session API's `userPointer`),
/// `clientId` (client credentials), then the names people log in with. A
/// flow that learns nothing about the user (a pasted token without userinfo)
/// has one account, `default`.
enum AccountIdentity {
    static let members = ["sub", "id", "clientId", "username", "login", "preferred_username", "email"]
    static let fallback = "default"

    static func of(user: JSONValue?) -> String {
        guard let object = user?.objectValue else { return fallback }
        for key in members {
            switch object[key] {
            case .string(let s)? where !s.isEmpty: return s
            case .int(let n)?: return String(n)
            default: continue
            }
        }
        return fallback
    }
}
