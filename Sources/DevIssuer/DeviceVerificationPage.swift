import Wire

/// `/device`, where a person enters the user code a device showed and approves
/// or denies it (RFC 8628 §3.3). `GET` shows the form (prefilled from
/// `?user_code=`, the `verification_uri_complete` form); `POST` decides.
///
/// Both decisions need the user's credentials, so nobody can deny someone
/// else's pending login by guessing codes.
enum DeviceVerificationPage {
    static let path = "/device"

    static func get(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let query = FormEncoding.uniqueParameters(Array((request.query ?? "").utf8)) ?? [:]
        return form(userCode: query["user_code"] ?? "", error: nil)
    }

    static func post(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        if let type = request.mediaType, type != "application/x-www-form-urlencoded" {
            return HTMLPage.response(400, title: "Device login", body: "<p>The form must be application/x-www-form-urlencoded.</p>")
        }
        guard let fields = FormEncoding.uniqueParameters(request.body) else {
            return HTMLPage.response(400, title: "Device login", body: "<p>The form is malformed or repeats a field.</p>")
        }
        let userCode = fields["user_code"] ?? ""
        guard context.state.isPendingDevice(userCode: userCode, now: context.now) else {
            var page = form(userCode: userCode, error: "Unknown, expired or already used code.")
            page.status = 400
            return page
        }
        guard let user = context.state.user(username: fields["username"] ?? "", password: fields["password"] ?? "") else {
            return form(userCode: userCode, error: "Invalid username or password.", username: fields["username"] ?? "")
        }
        switch fields["action"] {
        case "approve":
            guard context.state.decideDevice(userCode: userCode, approvingFor: user.username, now: context.now) else {
                return form(userCode: userCode, error: "Unknown, expired or already used code.")
            }
            return HTMLPage.response(200, title: "Device approved", ok: true,
                                     body: "<p>Your device is signed in as \(HTMLText.escape(user.username)). You can return to it.</p>")
        case "deny":
            guard context.state.decideDevice(userCode: userCode, approvingFor: nil, now: context.now) else {
                return form(userCode: userCode, error: "Unknown, expired or already used code.")
            }
            return HTMLPage.response(200, title: "Device denied", ok: false, body: "<p>The device will not be signed in.</p>")
        default:
            return HTMLPage.response(400, title: "Device login", body: "<p>action must be approve or deny.</p>")
        }
    }

    private static func form(userCode: String, error: String?, username: String = "") -> HTTPResponse {
        let body = """
            <p>Enter the code your device shows, and sign in to let it act for you.</p>
            \(HTMLPage.errorParagraph(error))<form method="post" action="\(path)">
            <label for="user_code">Code</label>
            <input id="user_code" class="code" name="user_code" value="\(HTMLText.escape(userCode))" autocomplete="off" required>
            \(HTMLPage.credentialFields(username: username))
            </form>
            """
        return HTMLPage.response(200, title: "Device login", body: body)
    }
}
