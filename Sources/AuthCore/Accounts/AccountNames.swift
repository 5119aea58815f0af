import JSON

/// The names an account's user goes by. An account's id is whatever the server
/// identifies the user by (`AccountIdentity`), often a number (`sub: "1"`): people
/// see, and name accounts by, these names instead.
public enum AccountNames {
    /// Members whose value the user logs in with, so one server gives it to one user.
    /// A display `name` ("Alice Smith") is not unique and never names an account.
    static let loginMembers = ["login", "username", "preferred_username", "email"]

    /// What to call the user of `account`: its `name`, else the account id.
    public static func display(_ user: JSONValue?, account: String) -> String { name(user) ?? account }

    /// How a message names the person: their name, else `account ID`; nil for the one
    /// account of a flow that learns nothing about its user (a pasted token).
    public static func person(_ user: JSONValue?, account: String) -> String? {
        name(user) ?? (account == AccountIdentity.fallback ? nil : "account \(account)")
    }

    /// The first readable name the server gave the user (OIDC claims first, then
    /// common API fields, the username typed at login among them); nil when none.
    public static func name(_ user: JSONValue?) -> String? {
        for key in ["preferred_username", "name", "email", "login", "username"] {
            if let s = user?[key]?.stringValue, !s.isEmpty { return s }
        }
        return nil
    }

    /// Whether `name` names the account: its id or one of its user's login names,
    /// compared case-insensitively (people type `Alice` for `alice`, git keeps the case of a URL's user).
    public static func matches(_ name: String, account: String, user: JSONValue?) -> Bool {
        let wanted = name.lowercased()
        return account.lowercased() == wanted || loginNames(user).contains { $0.lowercased() == wanted }
    }

    static func loginNames(_ user: JSONValue?) -> [String] {
        loginMembers.compactMap { user?[$0]?.stringValue }.filter { !$0.isEmpty }
    }

    /// The user a login keeps: the server's, with the username typed at the login
    /// (`username`) when the server did not already call the user that — a server
    /// whose userinfo says only `sub: "1"` leaves nothing else to show or name the account by.
    /// A login that typed nothing (a device code, a browser) keeps the username an earlier
    /// login of the same account typed (`previous`), so another way in loses no name.
    static func user(_ user: JSONValue?, typed: String?, previous: JSONValue?) -> JSONValue? {
        guard case .object(var object)? = user, object["username"] == nil else { return user }
        let username = typed ?? previous?["username"]?.stringValue
        guard let username, !username.isEmpty,
              !loginNames(user).contains(where: { $0.lowercased() == username.lowercased() }) else { return user }
        object["username"] = .string(username)
        return .object(object)
    }
}
