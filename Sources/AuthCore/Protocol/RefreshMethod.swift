import JSON
import JSONRPC

/// `refresh` after a 401: uses its provider.
public enum RefreshMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "refresh", summary: "Refresh after the server rejected a token (401); does nothing when that token was already replaced.",
        params: [.init("provider", required: true), .init("account"), .init("failedAuthorization")], result: "RefreshResult",
        errors: [1001, 1002, 1004, 1005, 1007, 1008, 1010, 1013, 1016])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.uses)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public struct Params: Sendable {
        public var provider: String
        public var account: String?
        /// The `Authorization` value (or bare token) the server rejected; nil: refresh now.
        public var failedAuthorization: String?

        public init(provider: String, account: String? = nil, failedAuthorization: String? = nil) {
            (self.provider, self.account, self.failedAuthorization) = (provider, account, failedAuthorization)
        }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var o: JSONObject = ["provider": .string(p.provider)]
        o.set("account", p.account)
        o.set("failedAuthorization", p.failedAuthorization)
        return o
    }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        return Params(provider: try p.string("provider"), account: try p.optionalString("account"),
                      failedAuthorization: try p.optionalString("failedAuthorization"))
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let p = try decode(params: call.params)
        let account = try AuthMethods.account(p.account, call, context)
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.refresh(provider: p.provider, account: account, failedAuthorization: p.failedAuthorization)
        }, encode: { encode(result: $0) })
    }

    public static func encode(result r: RefreshResult) -> JSONValue {
        ["provider": .string(r.provider), "refreshed": .bool(r.refreshed), "expiresAt": RFC3339.json(r.expiresAt)]
    }

    public static func decode(result r: JSONValue) throws(RPCError) -> RefreshResult {
        guard let refreshed = try r.required("refreshed", of: name).boolValue else { throw .unreadableResult(name, "has no 'refreshed'") }
        return RefreshResult(provider: r["provider"]?.stringValue ?? "", account: r["account"]?.stringValue ?? "", refreshed: refreshed,
                             expiresAt: r["expiresAt"]?.stringValue.flatMap(RFC3339.parse))
    }
}
