import JSON
import JSONRPC
import Locking

/// `login`: changes its provider, so it waits for that provider's earlier
/// requests and later ones wait for its answer — except that an interactive login
/// beside logged-in accounts holds back only later logins and logouts: requests for
/// those accounts need nothing it brings, and must not wait for a person to approve.
public enum LoginMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "login", summary: "Log in through a provider, or to the API at resource (learning it: discovery, registration); emits userLoggedIn. Device-code and browser logins send loginPrompt and wait.",
        params: [.init("provider"), .init("resource"), .init("name"), .init("flow"), .init("credentials"), .init("openBrowser")], result: "LoginResult",
        errors: [1002, 1003, 1005, 1008, 1009, 1010, 1014, 1015, 1016])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        if params["provider"] == nil, let resource = params["resource"]?.stringValue {
            // A resource already learned orders like its provider; a new one waits for nothing.
            return context.service.provider(forURL: resource, explicit: nil).map { .changes($0) } ?? .free
        }
        // The flow named (a bad name is refused by `handle`; ordered as the default meanwhile).
        let flow = params["flow"]?.stringValue.flatMap(Flow.init(rawValue:))
        return AuthMethods.provider(params) { id in context.service.loginLeavesAccounts(provider: id, flow: flow) ? .adds(id) : .changes(id) }
    }

    /// Logging in to a provider the door serves is what forwarding is for; learning an API
    /// (`resource`) would make this machine fetch, register and log in where the caller says.
    static func access(_ params: RPCParams) -> MethodAccess {
        params["provider"] == nil && params["resource"] != nil ? .hostOnly : .everyDoor
    }

    public struct Params: Sendable {
        /// A provider by id, or the API at a URL (learned first unless learned already).
        public enum Target: Sendable, Equatable {
            case provider(String)
            case resource(String)
        }

        public var target: Target
        /// One of the provider's flows; nil: its default (the first configured).
        public var flow: Flow?
        public var credentials: Credentials?
        public var openBrowser: Bool?
        /// With a resource: the id the API gets when it is learned now (`login URL --as NAME`).
        public var name: String?

        public init(_ target: Target, flow: Flow? = nil, credentials: Credentials? = nil, openBrowser: Bool? = nil, name: String? = nil) {
            (self.target, self.flow, self.credentials, self.openBrowser, self.name) = (target, flow, credentials, openBrowser, name)
        }

        /// A flow the provider has; an unknown provider is the service's to refuse (1002).
        static func flow(_ name: String?, provider: ProviderConfig?) throws(RPCError) -> Flow? {
            guard let name else { return nil }
            guard let flow = Flow(rawValue: name) else {
                throw .invalidParams("'flow' must be one of \(Flow.allCases.map(\.rawValue).joined(separator: ", ")), got \(JSONSerializer.string(.string(name)))")
            }
            if let provider, !provider.flows.contains(flow) {
                throw .invalidParams("'flow': \(provider.displayName) has no \(name) login; its flows: \(provider.flowNames)")
            }
            return flow
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

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var o: JSONObject = [:]
        switch p.target {
        case .provider(let id): o["provider"] = .string(id)
        case .resource(let url): o["resource"] = .string(url)
        }
        o.set("name", p.name)
        o.set("flow", p.flow?.rawValue)
        switch p.credentials {
        case .token(let token)?: o["credentials"] = ["token": .string(token)]
        case .password(let username, let password)?: o["credentials"] = ["username": .string(username), "password": .string(password)]
        case nil: break
        }
        if let open = p.openBrowser { o["openBrowser"] = .bool(open) }
        return o
    }

    /// `login {provider, flow?, credentials?, openBrowser?}` or `login {resource, flow?, openBrowser?}`.
    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        let flow = try Params.flow(p.optionalString("flow"), provider: nil)
        let openBrowser = try p.optionalBool("openBrowser")
        if p["provider"] == nil, p["resource"] != nil {
            try p.rejectUnknown(allowed: ["resource", "name", "flow", "openBrowser"])
            let resource = try p.string("resource")
            guard Origin(url: resource) != nil else { throw .invalidParams("'resource' must be an absolute http or https URL") }
            let name = try p.optionalString("name")
            if let problem = name.flatMap(ProviderConfig.idProblem) { throw .invalidParams("'name': \(problem)") }
            if let flow, flow != .authorizationCode, flow != .deviceCode {
                throw .invalidParams("'flow': an API learned from its metadata logs in with authorizationCode or deviceCode")
            }
            return Params(.resource(resource), flow: flow, openBrowser: openBrowser, name: name)
        }
        try p.rejectUnknown(allowed: descriptor.paramNames)
        if p["resource"] != nil { throw .invalidParams("'login' takes 'provider' or 'resource', not both") }
        if p["name"] != nil { throw .invalidParams("'name' names an API learned from 'resource'; a configured provider has its id") }
        return Params(.provider(try p.string("provider")), flow: flow, credentials: try Params.credentials(p.optionalObject("credentials")),
                      openBrowser: openBrowser)
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let params = try decode(params: call.params)
        let login = prompts(call, context, openBrowser: params.openBrowser)
        let service = context.service
        switch params.target {
        case .resource(let resource):
            // A name is given once, when the API is learned: renaming would move its sessions in the store.
            if let name = params.name, let known = service.provider(forURL: resource, explicit: nil), known != name,
               service.providerConfig(known)?.learned != nil {
                throw .invalidParams("'name': \(resource) is learned already, as \(known); 'forget' it first to learn it as \(name)")
            }
            return AuthMethods.later({ () async throws(AuthError) in
                try await service.login(resource: resource, name: params.name, flow: params.flow, context: login)
            }, encode: { encode(result: $0) })
        case .provider(let id):
            _ = try Params.flow(params.flow?.rawValue, provider: service.config.providers.first { $0.id == id })
            return AuthMethods.later({ () async throws(AuthError) in
                try await service.login(provider: id, flow: params.flow, credentials: params.credentials, context: login)
            }, encode: { encode(result: $0) })
        }
    }

    /// The login context of a request that may log in: `loginPrompt`s to the host that asked
    /// (naming, for a learned API, its resource and the authorization server), its redirect
    /// pasted back through `completeLogin`.
    static func prompts(_ call: RPCCall, _ methods: AuthMethodContext, openBrowser: Bool?) -> LoginContext {
        let (connection, requestId) = (call.connection, call.id ?? .null)
        var context = LoginContext(openBrowser: openBrowser, prompt: { prompt, target in
            connection.notify(AuthMethods.loginPrompt, Self.prompt(prompt, target: target, requestId: requestId))
        }, acceptPaste: acceptPaste(call, methods), waiting: { message in
            connection.notify(AuthMethods.loginWaiting, ["provider": call.params["provider"] ?? call.params["resource"] ?? .null,
                                                         "requestId": requestId, "message": .string(message)])
        }, askFields: AuthHost.host(of: call.connection)?.asksLoginFields == true ? askFields(call) : nil)
        // A host that presents logins itself is asked first (`PresentLogin`); the above is its fallback.
        context.hostPresents = PresentLogin.presenter(call, methods)
        return context
    }

    /// A login's fields asked of the host that started it (`AuthMethods.loginFields`); whatever
    /// it answers other than fields (an error, no answer in time, a closed connection) cancels the login.
    static func askFields(_ call: RPCCall) -> @Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials {
        { [connection = call.connection, requestId = call.id ?? .null] config, flow throws(AuthError) in
            let params: JSONValue = ["provider": .string(config.id), "displayName": .string(config.displayName), "requestId": requestId,
                                     "fields": .array(flow.descriptor.fields.map(\.json))]
            let answer: JSONValue
            do { answer = try await connection.request(AuthMethods.loginFields, params, timeout: fieldsTimeout) } catch {
                throw AuthError.loginCancelled(config)
            }
            guard let fields = answer.objectValue, let credentials = try? Params.credentials(fields) else { throw AuthError.loginCancelled(config) }
            return credentials
        }
    }

    /// How long a person may take to type a login's fields.
    static let fieldsTimeout = 15.0 * 60

    /// A browser login's redirect may also come pasted back (`completeLogin`), on any connection
    /// of the agent — a forward socket's only for the logins it started (`PendingLogins`).
    static func acceptPaste(_ call: RPCCall, _ context: AuthMethodContext) -> @Sendable (RedirectPaste) -> Void {
        { [requestId = call.id ?? .null, pending = context.service.pendingLogins, door = context.service.door] in
            pending.add(requestId: requestId, door: door, $0)
        }
    }

    /// `loginPrompt`'s params: the prompt, with what it is for and the id of the `login` it belongs to.
    static func prompt(_ prompt: LoginPrompt, target: LoginTarget, requestId: JSONValue) -> JSONValue {
        var o: JSONObject = ["provider": .string(target.provider), "requestId": requestId]
        switch prompt {
        case .deviceCode(let userCode, let uri, let complete, let expiresAt):
            o["userCode"] = .string(userCode)
            o["verificationUri"] = .string(uri)
            if let complete { o["verificationUriComplete"] = .string(complete) }
            o["expiresAt"] = .string(RFC3339.format(expiresAt))
        case .browser(let url, let expiresAt):
            o["url"] = .string(url)
            o["expiresAt"] = .string(RFC3339.format(expiresAt))
        }
        if let resource = target.resource { o["resource"] = .string(resource) }
        if let server = target.authorizationServer { o["authorizationServer"] = .string(server) }
        return .object(o)
    }

    public static func encode(result r: LoginResult) -> JSONValue {
        ["provider": .string(r.provider), "account": .string(r.account), "user": r.user, "expiresAt": RFC3339.json(r.expiresAt)]
    }

    public static func decode(result r: JSONValue) throws(RPCError) -> LoginResult {
        guard let provider = try r.required("provider", of: name).stringValue else { throw .unreadableResult(name, "has no provider") }
        return LoginResult(provider: provider, account: r["account"]?.stringValue ?? "", user: r["user"] ?? .null,
                           expiresAt: r["expiresAt"]?.stringValue.flatMap(RFC3339.parse))
    }
}
