import JSON
import JSONRPC

/// `token`: uses its provider.
public enum TokenMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "token", summary: "The current access token, for scripts; refreshed first when needed.",
        params: [.init("provider", required: true), .init("account"), .init("scopes"), .init("audience"), .init("resource"), .init("bearer"), .init("minValidSeconds")],
        result: "TokenResult", errors: [1001, 1002, 1004, 1005, 1007, 1008, 1010, 1013, 1015, 1016])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.uses)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public struct Params: Sendable {
        public var provider: String
        public var account: String?
        public var shape: TokenShape?
        /// The caller sends the token without a proof (`TokenUse.bearer`): refused for a DPoP provider.
        public var bearer: Bool
        /// Refreshed first unless valid at least this long (`token --min-valid`).
        public var minValidSeconds: Int?

        public init(provider: String, account: String? = nil, shape: TokenShape? = nil, bearer: Bool = false, minValidSeconds: Int? = nil) {
            (self.provider, self.account, self.shape, self.bearer, self.minValidSeconds) = (provider, account, shape, bearer, minValidSeconds)
        }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var o: JSONObject = ["provider": .string(p.provider)]
        o.set("account", p.account)
        p.shape?.encode(into: &o)
        if p.bearer { o["bearer"] = true }
        if let seconds = p.minValidSeconds { o["minValidSeconds"] = .int(Int64(seconds)) }
        return o
    }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        return Params(provider: try p.string("provider"), account: try p.optionalString("account"), shape: try AuthMethods.shape(p),
                      bearer: try p.optionalBool("bearer") == true, minValidSeconds: try minValidSeconds(p))
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let p = try decode(params: call.params)
        let account = try AuthMethods.account(p.account, call, context)
        let (provider, shape, use): (String, TokenShape, TokenUse) = (p.provider, p.shape ?? .none, p.bearer ? .bearer : .any)
        let service = context.service
        guard let minValid = p.minValidSeconds else {
            // A token that needs no refresh is answered at once: a one-shot helper starts no task for it.
            let answer: NowOrWait<TokenResult>
            do { answer = try service.tokenNowOrWait(provider: provider, account: account, shape: shape, use: use) } catch { throw error.rpcError }
            switch answer {
            case .now(let token): return .result(encode(result: token))
            case .wait(let work): return AuthMethods.later(work, encode: { encode(result: $0) })
            }
        }
        return AuthMethods.later({ () async throws(AuthError) in
            var token = try await service.token(provider: provider, account: account, shape: shape, use: use, validFor: Double(minValid))
            token.askedValidity = true
            return token
        }, encode: { encode(result: $0) })
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
    public static func encode(result r: TokenResult) -> JSONValue {
        var o: JSONObject = ["accessToken": .string(r.accessToken), "tokenType": .string(r.tokenType), "expiresAt": RFC3339.json(r.expiresAt)]
        if r.askedValidity { o["refreshed"] = .bool(r.refreshed) }
        return .object(o)
    }

    public static func decode(result r: JSONValue) throws(RPCError) -> TokenResult {
        guard let token = try r.required("accessToken", of: name).stringValue else { throw .unreadableResult(name, "has no access token") }
        var result = TokenResult(accessToken: token, tokenType: r["tokenType"]?.stringValue ?? "Bearer",
                                 expiresAt: r["expiresAt"]?.stringValue.flatMap(RFC3339.parse))
        if let refreshed = r["refreshed"]?.boolValue { (result.refreshed, result.askedValidity) = (refreshed, true) }
        return result
    }
}
