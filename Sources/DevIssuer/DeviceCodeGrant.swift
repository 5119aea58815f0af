/// The token endpoint's device_code grant (RFC 8628 §3.4–3.5): the device polls
/// until the person approved, denied, or the code expired.
enum DeviceCodeGrant {
    static let type = "urn:ietf:params:oauth:grant-type:device_code"

    static func handle(_ oauth: OAuthRequest, _ target: TokenTarget, _ context: RouteContext) -> HTTPResponse {
        guard let deviceCode = oauth.parameters["device_code"] else {
            return OAuthRequest.error(400, "invalid_request", "device_code is required")
        }
        switch context.state.pollDeviceCode(deviceCode, clientID: oauth.client.id, target: target, issuer: context.issuer, now: context.now) {
        case .issued(let grant):
            return TokenEndpoint.success(grant)
        case .pending:
            return OAuthRequest.error(400, "authorization_pending", "the user has not approved the device yet")
        case .slowDown:
            return OAuthRequest.error(400, "slow_down", "polling too fast; wait 5 seconds longer between polls")
        case .denied:
            return OAuthRequest.error(400, "access_denied", "the user denied the device")
        case .expired:
            return OAuthRequest.error(400, "expired_token", "the device code has expired; start over")
        case .invalid(let reason):
            return OAuthRequest.error(400, "invalid_grant", reason)
        }
    }
}
