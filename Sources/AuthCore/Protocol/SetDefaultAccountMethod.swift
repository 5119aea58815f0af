import JSON
import JSONRPC

/// `setDefaultAccount`: the account every agent on the store uses for requests
/// that name none and whose connection selected none.
enum SetDefaultAccountMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "setDefaultAccount", summary: "Make an account the provider's default, for every agent sharing the store.",
        params: [.init("provider", required: true), .init("account", required: true)], result: "AccountResult", errors: [1001, 1002, 1005, 1010, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .hostOnly }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let account = try call.params.string("account")
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.setDefaultAccount(provider: provider, account: account)
        }, encode: { ["provider": .string(provider), "account": .string($0)] })
    }
}
