/// What the bridge asks of the agent's logins, so the bridge itself stays transport logic
/// that tests drive with a fake. `AuthService` answers through `ServiceAuthorizer`.
public protocol MCPAuthorizer: Sendable {
    /// The `Authorization` value for `url`; nil when no provider covers it (the request goes unsigned).
    func authorization(for url: String) async throws(AuthError) -> String?
    /// After the server rejected `failed` with a 401: the value to resend with (one refresh at most,
    /// none when another request or process already replaced that token).
    func renewed(after failed: String, url: String) async throws(AuthError) -> String?
    /// After a 401 to an unsigned request: log in to what protects `url` (learned from the
    /// challenge), every waiting request behind one login. True when a provider covers `url` now.
    func logIn(url: String, challenge: String?) async throws(AuthError) -> Bool
}
