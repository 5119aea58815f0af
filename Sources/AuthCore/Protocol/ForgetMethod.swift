import JSON
import JSONRPC

/// `forget`: removes a learned provider (logs every account out, revoking at the server, and
/// drops it and its registration from the store); changes its provider, ordered like `logout`.
public enum ForgetMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "forget", summary: "Forget a provider the agent learned from an API: log every account out (revoking), delete it and its registration from the store.",
        params: [.init("provider", required: true)], result: "ForgetResult", errors: [1002, 1010, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .hostOnly }

    /// The learned provider's id.
    public typealias Params = String

    public static var name: String { descriptor.name }

    public static func encode(_ provider: String) -> JSONObject { ["provider": .string(provider)] }

    public static func decode(params p: RPCParams) throws(RPCError) -> String {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        return try p.string("provider")
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let provider = try decode(params: call.params)
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.forget(provider: provider) }, encode: { encode(result: $0) })
    }

    /// Whether the server revoked the tokens.
    public static func encode(result revoked: Bool) -> JSONValue { ["forgotten": true, "revoked": .bool(revoked)] }

    public static func decode(result r: JSONValue) throws(RPCError) -> Bool { r["revoked"] == true }
}
