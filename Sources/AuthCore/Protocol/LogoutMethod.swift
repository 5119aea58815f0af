import JSON
import JSONRPC

/// `logout`: changes its provider, ordered like `login`.
enum LogoutMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "logout", summary: "Log out of a provider, revoking its tokens at the server when configured; emits userLoggedOut.",
        params: [.init("provider", required: true)], result: "LogoutResult", errors: [1002])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in try await service.logout(provider: provider) },
                                 encode: { ["revoked": .bool($0)] })
    }
}
