import JSON
import JSONRPC

/// `login`: changes its provider, so it waits for that provider's earlier
/// requests and later ones wait for its answer.
enum LoginMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "login", summary: "Log in through a provider; emits userLoggedIn. Device-code and browser logins send loginPrompt and wait.",
        params: [.init("provider", required: true), .init("credentials"), .init("openBrowser")], result: "LoginResult",
        errors: [1002, 1003, 1005, 1008, 1009, 1010])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    struct Params {
        let provider: String
        let credentials: Credentials?
        let openBrowser: Bool?

        init(_ p: RPCParams) throws(RPCError) {
            try p.rejectUnknown(allowed: descriptor.paramNames)
            provider = try p.string("provider")
            credentials = try Self.credentials(p.optionalObject("credentials"))
            openBrowser = try p.optionalBool("openBrowser")
        }

        /// `{username, password}` or `{token}`, naming the offending field on error.
        static func credentials(_ object: JSONObject?) throws(RPCError) -> Credentials? {
            guard let object else { return nil }
            let p = RPCParams(object)
            if object["token"] != nil {
                try p.rejectUnknown(allowed: ["token"])
                return .token(try p.string("token"))
            }
            try p.rejectUnknown(allowed: ["username", "password"])
            return .password(username: try p.string("username"), password: try p.string("password"))
        }
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let params = try Params(call.params)
        let login = LoginContext(requestId: call.id ?? .null, openBrowser: params.openBrowser,
                                 prompt: { [connection = call.connection] in connection.notify(AuthMethods.loginPrompt, $0) })
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.login(provider: params.provider, credentials: params.credentials, context: login)
        }, encode: result)
    }

    static func result(_ r: LoginResult) -> JSONValue {
        ["provider": .string(r.provider), "user": r.user, "expiresAt": RFC3339.json(r.expiresAt)]
    }
}
