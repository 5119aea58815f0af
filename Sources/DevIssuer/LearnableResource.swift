import JSON
import Wire

/// A protected resource that describes itself, so a client can learn it with no
/// configuration (RFC 9728, as MCP servers do): `ISSUER/mcp`.
///
/// - `GET /.well-known/oauth-protected-resource/mcp` (and the root form
///   `/.well-known/oauth-protected-resource`): `{"resource": "ISSUER/mcp",
///   "authorization_servers": ["ISSUER"], "scopes_supported": ["mcp"], …}`.
/// - Without a valid token, `/mcp…` answers `401` with
///   `WWW-Authenticate: Bearer resource_metadata="…", scope="mcp"`.
/// - Tokens must be bound to the resource (RFC 8707 `resource=ISSUER/mcp`, the `aud`)
///   and carry scope `mcp`; `/mcp/admin` also needs `admin`, else `403` with
///   `error="insufficient_scope", scope="mcp admin"` (MCP 2025-11-25 step-up).
/// - A DPoP-bound token comes with its proof (`DPoPChecks`, mandatory nonces included).
/// - `GET /mcp` (and `/mcp/admin`) answers which token it got, as `/api/token` does;
///   `POST /mcp` (and `/mcp/admin`, for a step-up) is a minimal MCP server over JSON
///   (initialize, ping, tools/list, and the tool `whoami`), enough for a host to talk MCP
///   through the agent.
enum LearnableResource {
    static let path = "/mcp"
    static let adminPath = "/mcp/admin"
    static let metadataPath = "/.well-known/oauth-protected-resource"
    static let scope = "mcp"
    static let adminScope = "admin"

    static let routes: [Route] = [
        Route(metadataPath + path, counter: "resourceMetadata", ["GET": metadata]),
        Route(metadataPath, counter: "resourceMetadata", ["GET": metadata]),
        Route(path, counter: "mcp", ["GET": describe, "POST": mcp]),
        Route(adminPath, counter: "mcp", ["GET": admin, "POST": adminMCP]),
    ]

    static func resource(_ issuer: String) -> String { issuer + path }
    static func metadataURL(_ issuer: String) -> String { issuer + metadataPath + path }

    /// RFC 9728 §3.2. The root form answers the same document: this origin has one resource.
    static func metadata(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let faults = context.state.discoveryFaults
        if request.path != metadataPath, faults.contains(.noPathMetadata) {
            return .error(404, "not_found", "no such endpoint: \(request.path)")
        }
        var document: JSONObject = [
            "resource": .string(faults.contains(.wrongResource) ? context.issuer + "/elsewhere" : resource(context.issuer)),
            "authorization_servers": [.string(DiscoveryEndpoint.identifier(issuer: context.issuer, faults: faults))],
            "scopes_supported": [.string(scope)],
            "bearer_methods_supported": ["header"],
            "resource_name": "dev-issuer MCP",
        ]
        if faults.contains(.oversizedResourceMetadata) { document["padding"] = .string(String(repeating: "x", count: 300 * 1024)) }
        return .json(200, .object(document))
    }

    static func describe(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context, scopes: [scope]) { token in .json(200, .object(token.json)) }
    }

    static func admin(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        authorized(request, context, scopes: [scope, adminScope]) { token in .json(200, .object(token.json)) }
    }

    /// Streamable HTTP's JSON answer form: a request gets one JSON-RPC response, a
    /// notification or response `202`; `initialize` hands out an `Mcp-Session-Id`.
    static func mcp(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse { mcp(request, context, scopes: [scope]) }

    static func adminMCP(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse { mcp(request, context, scopes: [scope, adminScope]) }

    private static func mcp(_ request: HTTPRequest, _ context: RouteContext, scopes: [String]) -> HTTPResponse {
        authorized(request, context, scopes: scopes) { token in
            guard let message = request.jsonBody?.objectValue else {
                return .json(400, ["jsonrpc": "2.0", "id": .null, "error": ["code": -32700, "message": "Parse error"]])
            }
            guard let id = message["id"], let method = message["method"]?.stringValue else { return HTTPResponse(status: 202) }
            func result(_ value: JSONValue, headers: [(name: String, value: String)] = []) -> HTTPResponse {
                .json(200, ["jsonrpc": "2.0", "id": id, "result": value], headers: headers)
            }
            switch method {
            case "initialize":
                let version = message["params"]?["protocolVersion"] ?? "2025-11-25"
                return result(["protocolVersion": version, "capabilities": ["tools": [:]],
                               "serverInfo": ["name": "dev-issuer", "version": "1"]],
                              headers: [("Mcp-Session-Id", SecureRandom.token(bytes: 12))])
            case "ping":
                return result([:])
            case "tools/list":
                return result(["tools": [["name": "whoami", "description": "Who the access token speaks for.",
                                          "inputSchema": ["type": "object"]]]])
            case "tools/call" where message["params"]?["name"] == "whoami":
                let who: String
                switch token.subject {
                case .user(let user): who = user.username
                case .client(let id): who = id
                }
                return result(["content": [["type": "text", "text": .string(who)]], "isError": false])
            default:
                return .json(200, ["jsonrpc": "2.0", "id": id, "error": ["code": -32601, "message": .string("Method not found: \(method)")]])
            }
        }
    }

    /// Runs `body` for a valid token bound to this resource with `scopes`; else the RFC 6750
    /// challenge naming the metadata (401), or `insufficient_scope` (403).
    private static func authorized(_ request: HTTPRequest, _ context: RouteContext, scopes: [String],
                                   _ body: (ValidAccessToken) -> HTTPResponse) -> HTTPResponse {
        let withMetadata = !context.state.discoveryFaults.contains(.noChallengeMetadata)
        func challenge(_ parameters: [(String, String)]) -> [(name: String, value: String)] {
            var all = parameters
            if withMetadata { all.append(("resource_metadata", metadataURL(context.issuer))) }
            return [("WWW-Authenticate", "Bearer " + all.map { "\($0.0)=\"\($0.1)\"" }.joined(separator: ", "))]
        }
        guard request.bearerToken != nil || request.authorization(scheme: "DPoP") != nil else {
            return .error(401, "invalid_request", "missing bearer token", headers: challenge([("scope", scope)]))
        }
        // A DPoP-bound token comes with a proof by its key (RFC 9449 §7), and never as Bearer: checked as on /api.
        let presented: String
        switch DPoPChecks.accessToken(request, context) {
        case .failure(let refusal): return refusal
        case .success(let token): presented = token
        }
        guard let token = context.state.describe(accessToken: presented, now: context.now),
              token.target.resource == resource(context.issuer) else {
            return .error(401, "invalid_token", "the access token is invalid, expired, revoked or for another resource",
                          headers: challenge([("error", "invalid_token"), ("scope", scope)]))
        }
        let granted = IssuerState.scopes(token.scope)
        guard scopes.allSatisfy(granted.contains) else {
            let needed = scopes.joined(separator: " ")
            return .error(403, "insufficient_scope", "this needs scope \(needed)",
                          headers: challenge([("error", "insufficient_scope"), ("scope", needed)]))
        }
        return body(token)
    }
}
