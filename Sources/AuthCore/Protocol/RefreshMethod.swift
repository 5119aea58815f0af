import JSON
import JSONRPC

/// `refresh` after a 401: uses its provider.
enum RefreshMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "refresh", summary: "Refresh after the server rejected a token (401); does nothing when that token was already replaced.",
        params: [.init("provider", required: true), .init("account"), .init("failedAuthorization")], result: "RefreshResult",
        errors: [1001, 1002, 1004, 1005, 1007, 1008, 1010, 1013])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.uses)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let failed = try call.params.optionalString("failedAuthorization")
        let account = try AuthMethods.account(call, context)
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.refresh(provider: provider, account: account, failedAuthorization: failed)
        }, encode: { ["provider": .string($0.provider), "refreshed": .bool($0.refreshed), "expiresAt": RFC3339.json($0.expiresAt)] })
    }
}
