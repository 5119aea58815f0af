import JSON
import JSONRPC

/// `forget`: removes a learned provider (logs every account out, revoking at the server, and
/// drops it and its registration from the store); changes its provider, ordered like `logout`.
enum ForgetMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "forget", summary: "Forget a provider the agent learned from an API: log every account out (revoking), delete it and its registration from the store.",
        params: [.init("provider", required: true)], result: "ForgetResult", errors: [1002, 1010, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .hostOnly }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.forget(provider: provider) },
                                 encode: { ["forgotten": true, "revoked": .bool($0)] })
    }
}
