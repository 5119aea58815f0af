import JSON
import JSONRPC

/// `token`: uses its provider.
enum TokenMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "token", summary: "The current access token, for scripts; refreshed first when needed.",
        params: [.init("provider", required: true), .init("account"), .init("scopes"), .init("audience"), .init("resource"), .init("bearer"), .init("minValidSeconds")],
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
        let minValid = try minValidSeconds(call.params)
        let service = context.service
        guard let minValid else {
            return AuthMethods.later({ () async throws(AuthError) in try await service.token(provider: provider, account: account, shape: shape, use: use) },
                                     encode: { result($0, refreshed: nil) })
        }
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.token(provider: provider, account: account, shape: shape, use: use, validFor: Double(minValid))
        }, encode: { result($0, refreshed: $0.refreshed) })
    }

    /// `minValidSeconds`: a whole number of seconds from 0 to a year (as `--min-valid`).
    static func minValidSeconds(_ params: RPCParams) throws(RPCError) -> Int? {
        guard let value = params["minValidSeconds"] else { return nil }
        guard let seconds = value.intValue, (0...31_536_000).contains(seconds) else {
            throw .invalidParams("'minValidSeconds' must be a whole number of seconds from 0 to 31536000 (a year)")
        }
        return Int(seconds)
    }

    /// `TokenResult`; `refreshed` only when `minValidSeconds` was asked.
    static func result(_ r: TokenResult, refreshed: Bool?) -> JSONValue {
        var o: JSONObject = ["accessToken": .string(r.accessToken), "tokenType": .string(r.tokenType), "expiresAt": RFC3339.json(r.expiresAt)]
        if let refreshed { o["refreshed"] = .bool(refreshed) }
        return .object(o)
    }
}
