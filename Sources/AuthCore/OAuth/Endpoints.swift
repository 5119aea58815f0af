import JSON

/// A provider's OAuth endpoints: what the configuration names, and the rest
/// from discovery (explicit configuration wins: real servers omit some, such as
/// the device endpoint).
struct Endpoints: Sendable {
    var token: String?
    var revocation: String?
    var userinfo: String?
    var authorization: String?
    var deviceAuthorization: String?
    /// The server says its authorization responses carry RFC 9207's `iss`
    /// (`authorization_response_iss_parameter_supported`), so one without it is not its.
    var sendsIss = false
    /// RFC 9126: where authorization requests are pushed, and whether the server takes no other kind
    /// (`require_pushed_authorization_requests`).
    var pushedAuthorization: String?
    var requiresPAR = false

    init(config: ProviderConfig) {
        token = config.tokenEndpoint
        revocation = config.revocationEndpoint
        userinfo = config.userinfoEndpoint
        authorization = config.authorizationEndpoint
        deviceAuthorization = config.deviceAuthorizationEndpoint
        pushedAuthorization = config.pushedAuthorizationRequestEndpoint
    }

    /// Fills the gaps from discovered metadata; endpoints must be https (or loopback).
    mutating func fill(from metadata: JSONObject) {
        func pick(_ current: String?, _ key: String) -> String? {
            if let current { return current }
            guard let url = metadata[key]?.stringValue, Origin(url: url)?.isSecureForBearer == true else { return nil }
            return url
        }
        token = pick(token, "token_endpoint")
        revocation = pick(revocation, "revocation_endpoint")
        userinfo = pick(userinfo, "userinfo_endpoint")
        authorization = pick(authorization, "authorization_endpoint")
        deviceAuthorization = pick(deviceAuthorization, "device_authorization_endpoint")
        pushedAuthorization = pick(pushedAuthorization, "pushed_authorization_request_endpoint")
        sendsIss = metadata["authorization_response_iss_parameter_supported"]?.boolValue == true
        requiresPAR = metadata["require_pushed_authorization_requests"]?.boolValue == true
    }
}
