import JSON

/// OpenID Connect discovery and RFC 8414 authorization server metadata (one
/// document for both), so clients configured with only the issuer URL find the endpoints.
enum DiscoveryEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let base = context.issuer
        let authMethods: JSONValue = ["client_secret_basic", "client_secret_post", "none"]
        let metadata: JSONValue = [
            "issuer": .string(base),
            "authorization_endpoint": .string(base + "/authorize"),
            "device_authorization_endpoint": .string(base + "/device_authorization"),
            "token_endpoint": .string(base + "/token"),
            "revocation_endpoint": .string(base + "/revoke"),
            "userinfo_endpoint": .string(base + "/userinfo"),
            "grant_types_supported": .array(TokenEndpoint.supportedGrants.map(JSONValue.string)),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "profile", "email", "offline_access"],
            "token_endpoint_auth_methods_supported": authMethods,
            "revocation_endpoint_auth_methods_supported": authMethods,
            "dpop_signing_alg_values_supported": ["ES256"],
        ]
        return .json(200, metadata)
    }
}
