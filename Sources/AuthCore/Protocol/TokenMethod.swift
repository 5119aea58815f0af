import JSON
import JSONRPC

/// `token`: uses its provider.
enum TokenMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "token", summary: "The current access token, for scripts; refreshed first when needed.",
        params: [.init("provider", required: true), .init("account"), .init("scopes"), .init("audience"), .init("resource"), .init("bearer")],
        result: "TokenResult", errors: [1001, 1002, 1004, 1005, 1007, 1008, 1010, 1013, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.uses)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let account = try AuthMethods.account(call, context)
        let shape = try AuthMethods.shape(call.params) ?? .none
        // `bearer: true`: the caller sends the token without a proof (`TokenUse.bearer`).
        let use: TokenUse = try call.params.optionalBool("bearer") == true ? .bearer : .any
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.token(provider: provider, account: account, shape: shape, use: use) },
                                 encode: { ["accessToken": .string($0.accessToken), "tokenType": .string($0.tokenType), "expiresAt": RFC3339.json($0.expiresAt)] })
    }
}
