import JSON
import Wire

/// `POST /device_authorization` (RFC 8628 §3.1–3.2): a client without a
/// browser asks for a device code to poll with and a user code to show.
/// Clients authenticate as at the token endpoint (public ones send `client_id`).
enum DeviceAuthorizationEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let oauth: OAuthRequest
        switch OAuthRequest.parse(request, context) {
        case .rejected(let response): return response
        case .accepted(let parsed): oauth = parsed
        }
        let started = context.state.startDeviceAuthorization(clientID: oauth.client.id, scope: oauth.parameters["scope"], now: context.now)
        let verification = context.state.deviceVerificationURIOverride ?? context.issuer + DeviceVerificationPage.path
        let body: JSONValue = [
            "device_code": .string(started.deviceCode),
            "user_code": .string(started.userCode),
            "verification_uri": .string(verification),
            "verification_uri_complete": .string(verification + "?" + FormEncoding.queryString([("user_code", started.userCode)])),
            "expires_in": .int(Int64(started.expiresIn)),
            "interval": .int(Int64(started.interval)),
        ]
        return .json(200, body, headers: OAuthRequest.noStore)
    }
}
