/// What the bridge asks of the agent's logins, so the bridge itself stays transport logic
/// that tests drive with a fake. `McpLogins` (the executable) answers with `AuthService`.
/// A request's signing is the `sign` answer itself (nil: unsigned): it names the token a refusal
/// rejects, so nothing is learned back from header strings.
///
/// `url` is the MCP server's URL the user gave, which decides the provider (and what a login
/// learns); `target` is where the request goes — `url` itself, or the HTTP+SSE transport's
/// endpoint on `url`'s origin, which a DPoP proof must name.
public protocol MCPAuthorizer: Sendable {
    /// The `sign` answer for one `method` request to `target`, with the token of the provider covering
    /// `url`: `Authorization`, and `DPoP` (a proof for this request alone) for a DPoP-bound token; nil
    /// when no provider covers `url`.
    func signature(for url: String, method: String, at target: String) async throws(AuthError) -> Signature?
    /// After the server rejected the token `rejected` signed with a 401: the signing to resend with
    /// (one refresh at most, none when another request or process already replaced that token).
    func renewed(after rejected: Signature, url: String, method: String, at target: String) async throws(AuthError) -> Signature?
    /// After a 401 to an unsigned request: log in to what protects `url` (learned from the
    /// challenge), every waiting request behind one login. True when a provider covers `url` now.
    func logIn(url: String, challenge: BearerChallenge?) async throws(AuthError) -> Bool
    /// After a `403 insufficient_scope` for `scopes` to the request `rejected` signed: the signing to
    /// resend with once the agent stepped up (logged in again for the scopes granted and asked), or
    /// nil when there is nothing to step up to (no learned provider, or no scope the login lacks).
    func steppedUp(after rejected: Signature, scopes: [String], url: String, method: String, at target: String) async throws(AuthError) -> Signature?
    /// A `DPoP-Nonce` the server answered a proven request with (RFC 9449 §9): kept for the next proofs.
    func keep(dpopNonce: String, url: String)
}
