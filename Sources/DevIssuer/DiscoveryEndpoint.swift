import JSON

/// OpenID Connect discovery and RFC 8414 authorization server metadata (one
/// document for both), so clients configured with only the issuer URL find the endpoints,
/// and clients that learn an API by themselves find how to register: RFC 7591
/// `registration_endpoint`, Client ID Metadata Documents and RFC 9207 `iss`.
/// `DiscoveryFault`s bend it the ways a client must refuse.
enum DiscoveryEndpoint {
    /// The path of the issuer identifier `ISSUER/tenant` (`DiscoveryFault.issuerWithPath`).
    static let tenantPath = "/tenant"
    /// Where the tenant issuer's metadata is: RFC 8414 and OpenID path insertion, then OpenID path appending.
    static let tenantRoutes: [Route] = [
        Route("/.well-known/oauth-authorization-server" + tenantPath, counter: "discovery", ["GET": handle]),
        Route("/.well-known/openid-configuration" + tenantPath, counter: "discovery", ["GET": handle]),
        Route(tenantPath + "/.well-known/openid-configuration", counter: "discovery", ["GET": handle]),
    ]

    /// The issuer identifier whose metadata `path` is, or `nil` when that metadata is switched off.
    private static func issuerIdentifier(path: String, issuer: String, faults: Set<DiscoveryFault>) -> String? {
        guard path.hasSuffix(tenantPath) || path.hasPrefix(tenantPath + "/") else { return issuer }
        guard faults.contains(.issuerWithPath) else { return nil }
        if faults.contains(.onlyPathAppendedMetadata), path.hasSuffix(tenantPath) { return nil }
        return issuer + tenantPath
    }

    /// The `iss` of authorization responses and the issuer the protected resource names.
    static func identifier(issuer: String, faults: Set<DiscoveryFault>) -> String {
        faults.contains(.issuerWithPath) ? issuer + tenantPath : issuer
    }

    static func handle(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let base = context.issuer
        let faults = context.state.discoveryFaults
        guard let identifier = issuerIdentifier(path: request.path, issuer: base, faults: faults) else {
            return .error(404, "not_found", "no such endpoint: \(request.path)")
        }
        let authMethods: JSONValue = ["client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none"]
        var metadata: JSONObject = [
            "issuer": .string(faults.contains(.wrongIssuer) ? identifier + "/other-issuer" : identifier),
            "authorization_endpoint": .string(base + "/authorize"),
            "device_authorization_endpoint": .string(base + "/device_authorization"),
            "token_endpoint": .string(faults.contains(.insecureEndpoint) ? "http://auth.example.com/token" : base + "/token"),
            "revocation_endpoint": .string(base + "/revoke"),
            "userinfo_endpoint": .string(base + "/userinfo"),
            "grant_types_supported": .array(TokenEndpoint.grants(context.state).map(JSONValue.string)),
            "jwks_uri": .string(base + "/jwks"),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "scopes_supported": ["openid", "profile", "email", "offline_access", .string(LearnableResource.scope), .string(LearnableResource.adminScope)],
            "token_endpoint_auth_methods_supported": authMethods,
            "revocation_endpoint_auth_methods_supported": authMethods,
            "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256", "PS256", "HS256"],
            "pushed_authorization_request_endpoint": .string(base + "/par"),
            "require_pushed_authorization_requests": .bool(faults.contains(.requirePAR)),
            "authorization_response_iss_parameter_supported": .bool(!faults.contains(.noIssSupport)),
            "dpop_signing_alg_values_supported": ["ES256"],
        ]
        if faults.contains(.noDeviceFlow) { metadata["device_authorization_endpoint"] = nil }
        if !faults.contains(.noRegistrationEndpoint) { metadata["registration_endpoint"] = .string(base + "/register") }
        if !faults.contains(.noClientMetadataDocuments) { metadata["client_id_metadata_document_supported"] = true }
        if faults.contains(.oversizedServerMetadata) { metadata["padding"] = .string(String(repeating: "x", count: 300 * 1024)) }
        return .json(200, .object(metadata))
    }
}
