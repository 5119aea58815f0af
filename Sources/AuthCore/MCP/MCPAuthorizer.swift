/// What the bridge asks of the agent's logins, so the bridge itself stays transport logic
/// that tests drive with a fake. `McpLogins` (the executable) answers with `AuthService`.
public protocol MCPAuthorizer: Sendable {
    /// The headers that authorize one `method` request to `url`: `Authorization`, and `DPoP` (a proof
    /// for this request alone) for a DPoP-bound token; none when no provider covers `url`.
    func headers(for url: String, method: String) async throws(AuthError) -> [(String, String)]
    /// After the server rejected the `Authorization` value `failed` with a 401: the headers to resend
    /// with (one refresh at most, none when another request or process already replaced that token).
    func renewed(after failed: String, url: String, method: String) async throws(AuthError) -> [(String, String)]
    /// After a 401 to an unsigned request: log in to what protects `url` (learned from the
    /// challenge), every waiting request behind one login. True when a provider covers `url` now.
    func logIn(url: String, challenge: String?) async throws(AuthError) -> Bool
    /// After a `403 insufficient_scope` to the request authorized by `failed`: the headers to resend
    /// with once the agent stepped up (logged in again for the scopes granted and asked), or nil
    /// when there is nothing to step up to (no learned provider, or no scope the login lacks).
    func steppedUp(after failed: String, url: String, method: String, challenge: String?) async throws(AuthError) -> [(String, String)]?
    /// A `DPoP-Nonce` the server answered a proven request with (RFC 9449 §9): kept for the next proofs.
    func keep(dpopNonce: String, url: String)
}
