import JSON

/// OpenID Connect discovery and RFC 8414 authorization server metadata (one
/// document for both), so clients configured with only the issuer URL find the endpoints,
/// and clients that learn an API by themselves find how to register: RFC 7591
/// `registration_endpoint`, Client ID Metadata Documents and RFC 9207 `iss`.
/// `DiscoveryFault`s bend it the ways a client must refuse.
enum DiscoveryEndpoint {
    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let base = context.issuer
        let faults = context.state.discoveryFaults
        let authMethods: JSONValue = ["client_secret_basic", "client_secret_post", "none"]
        var metadata: JSONObject = [
            "issuer": .string(faults.contains(.wrongIssuer) ? base + "/other-issuer" : base),
            "authorization_endpoint": .string(base + "/authorize"),
            "device_authorization_endpoint": .string(base + "/device_authorization"),
            "token_endpoint": .string(faults.contains(.insecureEndpoint) ? "http://auth.example.com/token" : base + "/token"),
            "revocation_endpoint": .string(base + "/revoke"),
            "userinfo_endpoint": .string(base + "/userinfo"),
            "grant_types_supported": .array(TokenEndpoint.supportedGrants.map(JSONValue.string)),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "profile", "email", "offline_access", .string(LearnableResource.scope), .string(LearnableResource.adminScope)],
            "token_endpoint_auth_methods_supported": authMethods,
            "revocation_endpoint_auth_methods_supported": authMethods,
            "authorization_response_iss_parameter_supported": true,
        ]
        if !faults.contains(.noRegistrationEndpoint) { metadata["registration_endpoint"] = .string(base + "/register") }
        if !faults.contains(.noClientMetadataDocuments) { metadata["client_id_metadata_document_supported"] = true }
        if faults.contains(.oversizedServerMetadata) { metadata["padding"] = .string(String(repeating: "x", count: 300 * 1024)) }
        return .json(200, .object(metadata))
    }
}
