import JSON
import JSONRPC

/// `logout`: changes its provider, ordered like `login`. An account that is not logged in is
/// nothing to do (`revoked: false`); a name that fits several accounts is 1001, never a guess.
enum LogoutMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "logout", summary: "Log out of an account of a provider (or all of them), revoking its tokens at the server when configured; emits userLoggedOut.",
        params: [.init("provider", required: true), .init("account"), .init("all")], result: "LogoutResult", errors: [1001, 1002, 1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .hostOnly }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let account = try AuthMethods.account(call, context)
        let all = try call.params.optionalBool("all") ?? false
        if all, account.account != nil { throw .invalidParams("'all' logs out every account; do not name one") }
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.logout(provider: provider, account: account, all: all) },
                                 encode: { ["revoked": .bool($0)] })
    }
}
