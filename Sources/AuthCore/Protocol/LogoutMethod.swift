import JSON
import JSONRPC

/// `logout`: changes its provider, ordered like `login`. An account that is not logged in is
/// nothing to do (`revoked: false`); a name that fits several accounts is 1001, never a guess.
public enum LogoutMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "logout", summary: "Log out of an account of a provider (or all of them), revoking its tokens at the server when configured; emits userLoggedOut.",
        params: [.init("provider", required: true), .init("account"), .init("all")], result: "LogoutResult", errors: [1001, 1002, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .hostOnly }

    public struct Params: Sendable {
        public var provider: String
        public var account: String?
        public var all: Bool

        public init(provider: String, account: String? = nil, all: Bool = false) {
            (self.provider, self.account, self.all) = (provider, account, all)
        }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var o: JSONObject = ["provider": .string(p.provider)]
        o.set("account", p.account)
        if p.all { o["all"] = true }
        return o
    }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        let params = Params(provider: try p.string("provider"), account: try p.optionalString("account"), all: try p.optionalBool("all") ?? false)
        if params.all, params.account != nil { throw .invalidParams("'all' logs out every account; do not name one") }
        return params
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let p = try decode(params: call.params)
        let account = try AuthMethods.account(p.account, call, context)
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.logout(provider: p.provider, account: account, all: p.all) },
                                 encode: { encode(result: $0) })
    }

    /// Whether the server revoked the tokens.
    public static func encode(result revoked: Bool) -> JSONValue { ["revoked": .bool(revoked)] }

    public static func decode(result r: JSONValue) throws(RPCError) -> Bool { r["revoked"] == true }
}
