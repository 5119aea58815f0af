import JSON

/// The JSON session login API, shaped like a typical Rails/Devise app:
/// log in with username and password, get a JWT, refresh it with itself, log out.
enum SessionEndpoints {
    /// `POST /sessions` with `{"session":{"username":…,"password":…}}` → 201 `{"jwt":…,"user":{…}}`.
    static func login(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let body = request.jsonBody,
              let session = body["session"]?.objectValue,
              let username = session["username"]?.stringValue,
              let password = session["password"]?.stringValue
        else {
            return .json(400, ["error": "malformed request: expected {\"session\":{\"username\":…,\"password\":…}}"])
        }
        guard let user = context.state.user(username: username, password: password) else {
            return .json(401, ["error": "invalid credentials"])
        }
        let jwt = context.state.startSession(for: user, now: context.now)
        return .json(201, ["jwt": .string(jwt), "user": user.sessionJSON])
    }

    /// `POST /sessions/refresh` with `Authorization: Bearer <jwt>` → a new jwt; the old one stops working.
    /// Expired tokens may be refreshed; revoked or unknown ones may not.
    static func refresh(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let token = request.bearerToken else { return unauthorized("missing bearer token") }
        guard let refreshed = context.state.refreshSession(token, now: context.now) else {
            return unauthorized("invalid or revoked session token")
        }
        return .json(200, ["jwt": .string(refreshed.jwt), "user": refreshed.user.sessionJSON])
    }

    /// `POST /sessions/logout` with `Authorization: Bearer <jwt>` → 200 `{}`; the token is revoked.
    static func logout(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let token = request.bearerToken else { return unauthorized("missing bearer token") }
        guard context.state.endSession(token) else { return unauthorized("unknown session token") }
        return .json(200, [:])
    }

    private static func unauthorized(_ message: String) -> HTTPResponse {
        .json(401, ["error": .string(message)], headers: [("WWW-Authenticate", "Bearer")])
    }
}
