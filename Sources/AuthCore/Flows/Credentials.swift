import JSON

/// What the user typed for a login; passwords live only as long as the login call.
public enum Credentials: Sendable {
    case password(username: String, password: String)
    case token(String)
}
