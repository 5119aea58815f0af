import JSON

/// A user as the issuer presents it in session responses, id tokens and userinfo.
struct UserProfile: Sendable {
    let id: String
    let username: String
    let name: String

    var email: String { "\(username)@example.com" }

    /// The `user` object of the session API.
    var sessionJSON: JSONValue {
        ["id": .string(id), "username": .string(username), "name": .string(name)]
    }

    /// Standard OIDC claims, shared by userinfo and id tokens.
    var standardClaims: JSONObject {
        ["sub": .string(username), "name": .string(name), "email": .string(email), "preferred_username": .string(username)]
    }
}
