/// What may follow the scheme in an `Authorization` header the agent builds.
///
/// Tokens come from servers, from the user's clipboard and from the store; a
/// CR, LF or NUL among them would let whoever controls the token add headers
/// to the host's request, and a space would make it two credentials. So every
/// access token and token type is checked here, where it enters a session.
/// The rule is RFC 7235's `token68` / RFC 6750's `b64token` widened to all
/// visible ASCII (`%x21-7E`), because real servers put other visible
/// characters in opaque tokens and the header stays well-formed with them.
enum AuthorizationToken {
    /// Non-empty, visible ASCII only: no spaces, no control characters, nothing beyond ASCII.
    static func isValid(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x21 && $0 <= 0x7E }
    }

    /// Why a rejected token was rejected, for error messages (never the token itself).
    static let rule = "characters that cannot be sent in an Authorization header (only visible ASCII without spaces is allowed)"
}
