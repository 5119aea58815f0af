import Wire

/// `/authorize`, the authorization endpoint of the code flow (RFC 6749 §4.1,
/// PKCE per RFC 7636, loopback redirects per RFC 8252).
///
/// `GET` validates the request and shows a login form (or, with auto-approve on,
/// redirects at once with a code for the configured user, so tests need no form);
/// `POST` takes the form back: approve with good credentials redirects with a
/// code, deny redirects with `access_denied`, bad credentials show the form again.
enum AuthorizationEndpoint {
    static func get(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let parameters = FormEncoding.uniqueParameters(Array((request.query ?? "").utf8)) else {
            return rejected("The query is malformed or repeats a parameter.")
        }
        switch AuthorizationRequest.validate(parameters, clients: context.state.clients, requireNonce: context.state.requireNonce) {
        case .rejected(let reason):
            return rejected(reason)
        case .redirectError(let uri, let error, let description, let state):
            return AuthorizationRequest.redirect(error: error, description: description, state: state, to: uri)
        case .valid(let authorization):
            guard let username = context.state.autoApproveUser else { return form(authorization, error: nil) }
            guard let user = context.state.users[username] else {
                return AuthorizationRequest.redirect(error: "access_denied", description: "the auto-approve user does not exist",
                                                     state: authorization.state, to: authorization.redirectURI)
            }
            return authorization.redirect(code: context.state.issueAuthorizationCode(authorization, user: user, now: context.now))
        }
    }

    static func post(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        if let type = request.mediaType, type != "application/x-www-form-urlencoded" {
            return rejected("The form must be application/x-www-form-urlencoded.")
        }
        guard let fields = FormEncoding.uniqueParameters(request.body) else {
            return rejected("The form is malformed or repeats a field.")
        }
        let authorization: AuthorizationRequest
        switch AuthorizationRequest.validate(fields, clients: context.state.clients, requireNonce: context.state.requireNonce) {
        case .rejected(let reason):
            return rejected(reason)
        case .redirectError(let uri, let error, let description, let state):
            return AuthorizationRequest.redirect(error: error, description: description, state: state, to: uri)
        case .valid(let valid):
            authorization = valid
        }
        switch fields["action"] {
        case "deny":
            return AuthorizationRequest.redirect(error: "access_denied", description: "the user denied the request",
                                                 state: authorization.state, to: authorization.redirectURI)
        case "approve":
            guard let user = context.state.user(username: fields["username"] ?? "", password: fields["password"] ?? "") else {
                return form(authorization, error: "Invalid username or password.", username: fields["username"] ?? "")
            }
            return authorization.redirect(code: context.state.issueAuthorizationCode(authorization, user: user, now: context.now))
        default:
            return rejected("action must be approve or deny.")
        }
    }

    /// The sign-in and the consent in one form: who asks, for what, and the person's answer.
    private static func form(_ authorization: AuthorizationRequest, error: String?, username: String = "") -> HTTPResponse {
        let scopes = (authorization.scope ?? "").split(separator: " ").map { "<code>\(HTMLText.escape(String($0)))</code>" }
        let asks = scopes.isEmpty ? "" : "<p class=\"muted\">It asks for: \(scopes.joined(separator: " "))</p>\n"
        let body = """
            <p>The application <code>\(HTMLText.escape(authorization.clientID))</code> asks to act for you. Sign in to allow it.</p>
            \(asks)\(HTMLPage.errorParagraph(error))<form method="post" action="/authorize">
            \(HTMLPage.hiddenInputs(authorization.formFields))
            \(HTMLPage.credentialFields(username: username, approve: "Sign in and allow"))
            </form>
            """
        return HTMLPage.response(200, title: "Sign in", body: body)
    }

    /// RFC 6749 §4.1.2.1: no redirect while the client or redirect URI is in doubt.
    private static func rejected(_ reason: String) -> HTTPResponse {
        HTMLPage.response(400, title: "Invalid authorization request", body: "<p>\(HTMLText.escape(reason))</p>")
    }
}
