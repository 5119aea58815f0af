import Foundation
import JSON
import JSONRPC

/// The auth methods of the protocol, each declared once (name, params, result,
/// errors, one doc line) and bound to an `AuthService`. `schema/openrpc.json`
/// is checked against these declarations by the test suite.
public enum AuthMethods {
    static let e = AuthErrorCode.self

    public static let status = MethodDescriptor(
        "status", summary: "Every configured provider, its login state and what a login asks the user for.", result: "StatusResult")
    public static let login = MethodDescriptor(
        "login", summary: "Log in through a provider; emits userLoggedIn. Device-code and browser logins send loginPrompt and wait.",
        params: [.init("provider", required: true), .init("credentials"), .init("openBrowser")], result: "LoginResult",
        errors: [1002, 1003, 1005, 1008, 1009])
    public static let logout = MethodDescriptor(
        "logout", summary: "Log out of a provider, revoking its tokens at the server when configured; emits userLoggedOut.",
        params: [.init("provider", required: true)], result: "LogoutResult", errors: [1002])
    public static let sign = MethodDescriptor(
        "sign", summary: "The headers that authorize an outgoing HTTP request, refreshing the token first when it is about to expire.",
        params: [.init("request", required: true), .init("provider")], result: "SignResult",
        errors: [1001, 1002, 1004, 1005, 1010, 1006, 1007])
    public static let refresh = MethodDescriptor(
        "refresh", summary: "Refresh after the server rejected a token (401); does nothing when that token was already replaced.",
        params: [.init("provider", required: true), .init("failedAuthorization")], result: "RefreshResult",
        errors: [1001, 1002, 1004, 1005, 1010, 1007])
    public static let token = MethodDescriptor(
        "token", summary: "The current access token, for scripts; refreshed first when needed.",
        params: [.init("provider", required: true)], result: "TokenResult", errors: [1001, 1002, 1004, 1005, 1010, 1007])
    public static let fetch = MethodDescriptor(
        "fetch", summary: "Send an HTTP request signed like sign; after a 401 for the token sent, refresh once and resend once.",
        params: [.init("request", required: true), .init("provider"), .init("timeoutSeconds"), .init("maxResponseBytes")],
        result: "FetchResult", errors: [1001, 1002, 1004, 1005, 1010, 1006, 1007, 1011, 1012])
    public static let subscribe = MethodDescriptor(
        "subscribe", summary: "Receive login-state notifications; answers the events subscribed and the current status.",
        params: [.init("events"), .init("providers")], result: "SubscribeResult", errors: [1002])
    public static let unsubscribe = MethodDescriptor("unsubscribe", summary: "Stop receiving notifications.", result: "EmptyResult")

    public static let descriptors = [status, login, logout, sign, refresh, token, fetch, subscribe, unsubscribe]

    /// Sent to the host whose interactive login waits for the user; not an `AuthEvent`
    /// because it goes to that host alone, subscribed or not.
    public static let loginPrompt = "loginPrompt"

    /// What `initialize` advertises.
    public static var capabilities: JSONValue {
        ["flows": .array(Flow.allCases.map { .string($0.rawValue) }), "events": .array(AuthEvent.Name.allCases.map { .string($0.rawValue) })]
    }

    /// Registers every auth method; events reach the host through `subscriptions`.
    public static func register(into registry: inout MethodRegistry, service: AuthService, subscriptions: Subscriptions) {
        registry.register(status) { call in
            try call.params.rejectUnknown(allowed: [])
            return .result(service.status())
        }
        registry.register(login) { call in
            try call.params.rejectUnknown(allowed: login.paramNames)
            let provider = try call.params.string("provider")
            let credentials = try Credentials.parse(call.params.optionalObject("credentials"))
            let context = LoginContext(requestId: call.id ?? .null, openBrowser: try call.params.optionalBool("openBrowser"),
                                       prompt: { [connection = call.connection] in connection.notify(loginPrompt, $0) })
            return try started { () throws(AuthError) in try service.beginLogin(provider: provider, credentials: credentials, context: context) }
        }
        registry.register(logout) { call in
            try call.params.rejectUnknown(allowed: logout.paramNames)
            let provider = try call.params.string("provider")
            return try started { () throws(AuthError) in try service.beginLogout(provider: provider) }
        }
        registry.register(sign) { call in
            try call.params.rejectUnknown(allowed: sign.paramNames)
            let request = RPCParams(try call.params.object("request"))
            try request.rejectUnknown(allowed: ["method", "url", "headers"])
            _ = try request.string("method")
            let url = try request.string("url")
            _ = try request.optionalObject("headers")
            let provider = try call.params.optionalString("provider")
            let step: AuthService.Step
            do {
                step = try service.beginSign(url: url, provider: provider)
            } catch let error as AuthError {
                throw error.rpcError
            }
            switch step {
            case .ready(let answer): return .encoded(answer)
            case .wait(let work): return later(work)
            }
        }
        registry.register(refresh) { call in
            try call.params.rejectUnknown(allowed: refresh.paramNames)
            let provider = try call.params.string("provider")
            let failed = try call.params.optionalString("failedAuthorization")
            return try started { () throws(AuthError) in try service.beginRefresh(provider: provider, failedAuthorization: failed) }
        }
        registry.register(token) { call in
            try call.params.rejectUnknown(allowed: token.paramNames)
            let provider = try call.params.string("provider")
            return try started { () throws(AuthError) in try service.beginToken(provider: provider) }
        }
        registry.register(fetch) { call in
            try call.params.rejectUnknown(allowed: fetch.paramNames)
            let request = try fetchRequest(call.params)
            let provider = try call.params.optionalString("provider")
            return try started { () throws(AuthError) in try service.beginFetch(request, provider: provider) }
        }
        registry.register(subscribe) { call in
            try call.params.rejectUnknown(allowed: subscribe.paramNames)
            var events: [AuthEvent.Name] = [.userLoggedIn, .userLoggedOut]
            if let names = try call.params.optionalStringArray("events") {
                events = []
                for (i, name) in names.enumerated() {
                    guard let e = AuthEvent.Name(rawValue: name) else {
                        throw RPCError.invalidParams("'events[\(i)]' must be one of \(AuthEvent.Name.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(name)\"")
                    }
                    if !events.contains(e) { events.append(e) }
                }
            }
            let providers = try call.params.optionalStringArray("providers")
            for p in providers ?? [] where !service.knows(p) {
                throw AuthError(.unknownProvider, "No provider \"\(p)\" is configured.", provider: p).rpcError
            }
            let filter = providers.map(Set.init)
            subscriptions.subscribe(call.connection, events: Set(events), providers: filter)
            return .result(["events": .array(events.map { .string($0.rawValue) }), "status": service.status(providers: filter)])
        }
        registry.register(unsubscribe) { call in
            try call.params.rejectUnknown(allowed: [])
            subscriptions.unsubscribe()
            return .result([:])
        }
    }
}

extension AuthMethods {
    private static let separators = Set("\"(),/:;<=>?@[\\]{}".utf8)

    /// `fetch`'s params as a request; every check names the field at fault.
    static func fetchRequest(_ params: RPCParams) throws(RPCError) -> FetchRequest {
        let object = try params.object("request")
        let r = RPCParams(object)
        try r.rejectUnknown(allowed: ["method", "url", "headers", "body", "bodyBase64"])
        var request = FetchRequest(method: try r.string("method"), url: try r.string("url"))
        guard !request.method.isEmpty, request.method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
            throw .invalidParams("'request.method' must be an HTTP method such as GET")
        }
        guard Origin(url: request.url) != nil else { throw .invalidParams("'request.url' must be an absolute http or https URL") }
        for (name, value) in (try r.optionalObject("headers"))?.members.map({ ($0, $1) }) ?? [] {
            guard let text = value.stringValue else { throw .invalidParams("'request.headers.\(name)' must be a string") }
            // A name is an RFC 9110 token; a value may not end the header line.
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && !Self.separators.contains($0) }) else {
                throw .invalidParams("'request.headers' has a name that is not an HTTP token")
            }
            guard HTTPRequestChecks.isHeaderSafe(text) else { throw .invalidParams("'request.headers.\(name)' contains CR, LF or NUL") }
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

    /// Begins an operation (checks that fail at once become their protocol
    /// errors) and hands its remaining work to the engine.
    static func started(_ begin: () throws(AuthError) -> AuthService.Work) throws(RPCError) -> RPCOutcome {
        do {
            return later(try begin())
        } catch {
            throw error.rpcError
        }
    }

    /// Work that waits; auth failures become their protocol errors, and the
    /// engine releases the provider's later requests once the answer is queued.
    static func later(_ work: AuthService.Work) -> RPCOutcome {
        .later({
            do {
                return try await work.run()
            } catch let error as AuthError {
                throw error.rpcError
            }
        }, answered: work.answered)
    }
}

/// The host's subscription: which events, for which providers, to which connection.
public final class Subscriptions: Sendable {
    private struct State {
        var connection: RPCConnection?
        var events: Set<AuthEvent.Name> = []
        var providers: Set<String>?
    }

    private let state = Locked(State())

    public init() {}

    func subscribe(_ connection: RPCConnection, events: Set<AuthEvent.Name>, providers: Set<String>?) {
        state.withLock { $0 = State(connection: connection, events: events, providers: providers) }
    }

    func unsubscribe() { state.withLock { $0 = State() } }

    /// Sends the event to the host if it subscribed to it.
    public func deliver(_ event: AuthEvent) {
        let s = state.current
        guard let connection = s.connection, s.events.contains(event.name), s.providers?.contains(event.provider) ?? true else { return }
        connection.notify(event.name.rawValue, event.params)
    }
}
