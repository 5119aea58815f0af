import JSON
import Wire

/// A protected API beside the issuer, for the demo, `fetch`'s transcripts and every
/// client's first example: it accepts exactly the access tokens (and session tokens)
/// this issuer considers valid, as a resource server would.
///
/// - `GET /api/me`: who the token speaks for; 401 with `WWW-Authenticate` otherwise.
/// - `GET /api/token`: which token this is — its subject, client, scope and target — so a
///   test sees which shaped token (scope, `resource`, `audience`) a client sent.
/// - `POST /api/echo`: the method, content type and body it received (never the token).
/// - `GET /api/redirect?to=URL`: `302` to `URL` (a path stays on this origin).
/// - `GET /api/bytes?n=N`: N bytes of `application/octet-stream`.
/// All but `/api/redirect` need a valid access token: bearer, or DPoP-bound with a proof.
enum ProtectedAPI {
    /// Counted as `api` (and faulted) like every public endpoint.
    static let routes: [Route] = [
        Route("/api/me", counter: "api", ["GET": me]),
        Route("/api/token", counter: "api", ["GET": token]),
        Route("/api/echo", counter: "api", ["POST": echo, "PUT": echo]),
        Route("/api/redirect", counter: "api", ["GET": redirect, "POST": redirect]),
        Route("/api/bytes", counter: "api", ["GET": bytes]),
    ]

    static func me(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context) { token in
            switch token.subject {
            case .user(let user): return .json(200, .object(user.standardClaims))
            case .client(let id): return .json(200, ["client_id": .string(id)])
            }
        }
    }

    /// `{"sub", "client_id"?, "aud"?, "scope"?, "resource"?, "audience"?}`, in that order (so a
    /// transcript can match the body as a string); `client_id` and `aud` (as in the token's
    /// claims) are absent for session tokens.
    static func token(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context) { token in .json(200, .object(token.json)) }
    }

    static func echo(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context) { _ in
            .json(200, ["method": .string(request.method), "contentType": request.headers.value("content-type").map(JSONValue.string) ?? .null,
                        "body": .string(String(decoding: request.body, as: UTF8.self))])
        }
    }

    static func redirect(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let target = parameter("to", of: request)
        guard let target else { return .error(400, "invalid_request", "missing to") }
        return .redirect(target)
    }

    static func bytes(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context) { _ in
            let n = parameter("n", of: request).flatMap(Int.init) ?? 0
            return HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")],
                                body: [UInt8](repeating: 0x61, count: max(0, min(n, 64 << 20))))
        }
    }

    private static func parameter(_ name: String, of request: HTTPRequest) -> String? {
        FormEncoding.uniqueParameters(Array((request.query ?? "").utf8))?[name]
    }

    /// Runs `body` for a valid, unrevoked, unexpired access token (a bearer token, or a
    /// DPoP-bound one with its proof: `DPoPChecks`), unless a `rejectAPI`
    /// fault says to refuse it anyway (a resource server that disagrees with the issuer).
    private static func authorized(_ request: HTTPRequest, _ context: RouteContext, _ body: (ValidAccessToken) -> HTTPResponse) -> HTTPResponse {
        let token: String
        switch DPoPChecks.accessToken(request, context) {
        case .failure(let refusal): return refusal
        case .success(let presented): token = presented
        }
        guard !context.state.takeAPIRejection(), let valid = context.state.describe(accessToken: token, now: context.now) else {
            return .error(401, "invalid_token", "the access token is invalid, expired or revoked",
                          headers: [("WWW-Authenticate", "Bearer error=\"invalid_token\"")])
        }
        return body(valid)
    }
}

extension ValidAccessToken {
    /// What `/api/token` answers.
    var json: JSONObject {
        var object: JSONObject = [:]
        switch subject {
        case .user(let user): object["sub"] = .string(user.username)
        case .client(let id): object["sub"] = .string(id)
        }
        if let clientID {
            object["client_id"] = .string(clientID)
            object["aud"] = target.audienceClaim ?? .string(clientID)
        }
        if let scope { object["scope"] = .string(scope) }
        if let resource = target.resource { object["resource"] = .string(resource) }
        if let audience = target.audience { object["audience"] = .string(audience) }
        return object
    }
}
