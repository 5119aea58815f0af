#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC

/// `fetch`: uses the provider that covers the URL, like `sign`.
public enum FetchMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "fetch", summary: "Send an HTTP request signed like sign; after a 401 for the token sent, refresh once and resend once. An uncovered URL answering 401 with a Bearer challenge gets result.login (or, with login: \"ifNeeded\", a login and a resend).",
        params: [.init("request", required: true), .init("provider"), .init("account"), .init("scopes"), .init("audience"), .init("resource"),
                 .init("timeoutSeconds"), .init("maxResponseBytes"), .init("login"), .init("openBrowser")],
        result: "FetchResult", errors: [1001, 1002, 1004, 1005, 1006, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014, 1016])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        SignMethod.ordering(params, context)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public struct Params: Sendable {
        public var request: FetchRequest
        public var provider: String?
        public var account: String?
        public var shape: TokenShape?
        /// `.ifNeeded`: an API that asks for a login gets one (prompting this host), then the resend.
        public var login: FetchLogin
        public var openBrowser: Bool?

        public init(_ request: FetchRequest, provider: String? = nil, account: String? = nil, shape: TokenShape? = nil,
                    login: FetchLogin = .hint, openBrowser: Bool? = nil) {
            (self.request, self.provider, self.account, self.shape, self.login, self.openBrowser) = (request, provider, account, shape, login, openBrowser)
        }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var headers = JSONObject()
        for (name, value) in p.request.headers { headers[name] = .string(value) }
        var request: JSONObject = ["method": .string(p.request.method), "url": .string(p.request.url), "headers": .object(headers)]
        if let body = p.request.body { request["bodyBase64"] = .string(Data(body).base64EncodedString()) }
        var o: JSONObject = ["request": .object(request)]
        if p.request.timeout != FetchRequest.defaultTimeout { o["timeoutSeconds"] = .double(p.request.timeout) }
        if p.request.maxResponseBytes != FetchRequest.defaultMaxResponseBytes { o["maxResponseBytes"] = .int(Int64(p.request.maxResponseBytes)) }
        o.set("provider", p.provider)
        o.set("account", p.account)
        p.shape?.encode(into: &o)
        if p.login == .ifNeeded { o["login"] = "ifNeeded" }
        if let open = p.openBrowser { o["openBrowser"] = .bool(open) }
        return o
    }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        let request = try request(p)
        let login: FetchLogin
        switch try p.optionalString("login") {
        case nil: login = .hint
        case "ifNeeded": login = .ifNeeded
        case let other?: throw .invalidParams("'login' must be \"ifNeeded\", got \(JSONSerializer.string(.string(other)))")
        }
        return Params(request, provider: try p.optionalString("provider"), account: try p.optionalString("account"), shape: try AuthMethods.shape(p),
                      login: login, openBrowser: try p.optionalBool("openBrowser"))
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let p = try decode(params: call.params)
        let account = try AuthMethods.account(p.account, call, context)
        let service = context.service
        // A login fetch runs itself prompts the host that asked, as `login` does.
        let prompts = LoginMethod.prompts(call, context, openBrowser: p.openBrowser)
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.fetch(p.request, provider: p.provider, account: account, shape: p.shape, login: p.login, context: prompts)
        }, encode: { encode(result: $0) })
    }

    /// The params as a request; every check names the field at fault.
    static func request(_ params: RPCParams) throws(RPCError) -> FetchRequest {
        let object = try params.object("request")
        let r = RPCParams(object)
        try r.rejectUnknown(allowed: ["method", "url", "headers", "body", "bodyBase64"])
        var request = FetchRequest(method: try r.string("method"), url: try r.string("url"))
        guard FetchRequest.isMethod(request.method) else {
            throw .invalidParams("'request.method' must be an HTTP method such as GET")
        }
        guard Origin(url: request.url) != nil else { throw .invalidParams("'request.url' must be an absolute http or https URL") }
        for (name, value) in (try r.optionalObject("headers"))?.members.map({ ($0, $1) }) ?? [] {
            guard let text = value.stringValue else { throw .invalidParams("'request.headers.\(name)' must be a string") }
            switch FetchRequest.refusal(name: name, value: text) {
            case .notAToken?: throw .invalidParams("'request.headers' has a name that is not an HTTP token")
            case .unsafeValue?: throw .invalidParams("'request.headers.\(name)' contains CR, LF or NUL")
            case .reserved?:
                throw .invalidParams("'request.headers.\(name)' is set by the agent: Host, Content-Length, Transfer-Encoding, "
                                     + "Connection, TE, Upgrade and Proxy-* cannot be given")
            case nil: break
            }
            request.headers.append((name, text))
        }
        switch (try r.optionalString("body"), try r.optionalString("bodyBase64")) {
        case (let text?, nil): request.body = Array(text.utf8)
        case (nil, let encoded?):
            guard let data = Data(base64Encoded: encoded) else { throw .invalidParams("'request.bodyBase64' is not valid base64") }
            request.body = Array(data)
        case (nil, nil): break
        case (_?, _?): throw .invalidParams("'request' may have 'body' or 'bodyBase64', not both")
        }
        if let value = params.object["timeoutSeconds"] {
            guard let seconds = value.doubleValue, seconds > 0, seconds <= 600 else {
                throw .invalidParams("'timeoutSeconds' must be a number of seconds above 0 and at most 600")
            }
            // Below a millisecond, the transport's resolution, a timeout cannot be kept (it once became curl's 0, "no timeout").
            guard seconds >= FetchRequest.minimumTimeout else { throw .invalidParams("'timeoutSeconds' must be at least 0.001 (one millisecond)") }
            request.timeout = seconds
        }
        if let value = params.object["maxResponseBytes"] {
            guard let bytes = value.intValue, bytes >= 0, bytes <= 1 << 30 else {
                throw .invalidParams("'maxResponseBytes' must be an integer from 0 to 1073741824")
            }
            request.maxResponseBytes = Int(bytes)
        }
        return request
    }

    public static func encode(result r: FetchResponse) -> JSONValue {
        var headers = JSONObject()
        for (name, value) in r.headers.sorted(by: { $0.key < $1.key }) { headers[name] = .string(value) }
        var o: JSONObject = ["status": .int(Int64(r.status)), "headers": .object(headers)]
        if let text = r.textBody { o["body"] = .string(text) } else { o["bodyBase64"] = .string(Data(r.body).base64EncodedString()) }
        if let provider = r.provider { o["provider"] = .string(provider) }
        o["signed"] = .bool(r.signed)
        o["retried"] = .bool(r.retried)
        if let hint = r.login {
            var login: JSONObject = ["resource": .string(hint.resource), "scopes": .array(hint.scopes.map(JSONValue.string))]
            if let server = hint.authorizationServer { login["authorizationServer"] = .string(server) }
            if let metadata = hint.resourceMetadata { login["resourceMetadata"] = .string(metadata) }
            o["login"] = .object(login)
        }
        return .object(o)
    }

    public static func decode(result r: JSONValue) throws(RPCError) -> FetchResponse {
        guard let status = try r.required("status", of: name).intValue else { throw .unreadableResult(name, "has no status") }
        var headers: [String: String] = [:]
        if let fields = r["headers"]?.objectValue {
            for (name, value) in fields.members { headers[name] = value.stringValue ?? "" }
        }
        let body: [UInt8]
        if let text = r["body"]?.stringValue { body = Array(text.utf8) } else {
            body = r["bodyBase64"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { Array($0) } ?? []
        }
        var response = FetchResponse(status: Int(status), headers: headers, body: body, provider: r["provider"]?.stringValue,
                                     signed: r["signed"] == true, retried: r["retried"] == true)
        if let hint = r["login"], let resource = hint["resource"]?.stringValue {
            response.login = LoginHint(resource: resource, authorizationServer: hint["authorizationServer"]?.stringValue,
                                       scopes: (hint["scopes"]?.arrayValue ?? []).compactMap(\.stringValue),
                                       resourceMetadata: hint["resourceMetadata"]?.stringValue)
        }
        return response
    }
}
