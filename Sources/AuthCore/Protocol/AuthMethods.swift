#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC

/// One method of the auth protocol, declared in one place: its descriptor
/// (name, params, result, errors — checked against `schema/openrpc.json` by the
/// test suite, through the registry the agent really serves), how it is ordered
/// against earlier requests, and how its params and result cross between JSON
/// and the service's Swift values. The service itself knows nothing of JSON-RPC.
protocol AuthMethod: Sendable {
    static var descriptor: MethodDescriptor { get }
    /// Where a call stands against earlier ones (`RequestOrdering`), from its params.
    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering
    /// Which doors (`Door`) may make the call, from its params; the engine refuses it at the
    /// others (1015) before it is ordered or run.
    static func access(_ params: RPCParams) -> MethodAccess
    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome
}

/// What the methods are bound to; what each host keeps is its connection's `AuthHost`.
struct AuthMethodContext: Sendable {
    let service: AuthService
    /// `sign`'s answers, serialized once per session.
    let signAnswers = SignAnswers()
    let selections = AccountSelections()
}

/// The auth methods, registered into the engine's registry.
public enum AuthMethods {
    /// Adding a method: a file in this folder declaring an `AuthMethod`, one line here, the schema.
    static let all: [any AuthMethod.Type] = [
        StatusMethod.self, LoginMethod.self, LogoutMethod.self, ForgetMethod.self, SignMethod.self, RefreshMethod.self, TokenMethod.self,
        FetchMethod.self, SubscribeMethod.self, UnsubscribeMethod.self, SelectAccountMethod.self, SetDefaultAccountMethod.self,
        CompleteLoginMethod.self,
    ]

    /// Sent to the host whose interactive login waits for the user; not an `AuthEvent`
    /// because it goes to that host alone, subscribed or not.
    public static let loginPrompt = "loginPrompt"

    /// Sent to the host whose login waits for another one of the same provider (another process's,
    /// or another connection's: one interactive login per provider), so the person knows why
    /// nothing is asked yet: `{provider, requestId, message}`.
    public static let loginWaiting = "loginWaiting"

    /// Sent by the agent to a host that said `capabilities: {loginFields: true}` in `initialize`,
    /// when its login needs fields it did not bring (a username and password, a token): a request
    /// the host answers with `{username, password}` or `{token}`, asked under the provider's one-login
    /// lock so parallel logins wait for this person's answer instead of each asking.
    public static let loginFields = "loginFields"

    /// Sent by the agent to a host that said `capabilities: {presentLogin: …}` in `initialize`,
    /// when a login it started needs the person: the host presents it (`PresentLogin`).
    public static let presentLogin = PresentLogin.method

    /// What `initialize` advertises.
    public static var capabilities: JSONValue {
        ["flows": .array(Flow.allCases.map { .string($0.rawValue) }), "events": .array(AuthEvent.Name.allCases.map { .string($0.rawValue) })]
    }

    /// `status`'s result, for the command line's `status --json`.
    public static func statusResult(_ providers: [ProviderStatus], store: StoreStatus?) -> JSONValue {
        StatusMethod.result(providers, store: store)
    }

    /// Registers every auth method. Each connection they serve is made with its own `AuthHost`
    /// as its session (its subscription and account selections, freed when it closes); events
    /// reach the subscribed hosts through the `Subscriptions` those hosts share.
    public static func register(into registry: inout MethodRegistry, service: AuthService) {
        let context = AuthMethodContext(service: service)
        let door = service.door
        for method in all {
            let name = method.descriptor.name
            registry.register(method.descriptor, ordering: { method.ordering($0, context) },
                              access: { method.access($0).refusal(name, at: door)?.rpcError }) { call in
                try method.handle(call, context)
            }
        }
        // The shortcut skips the access check: `sign` is for every door.
        registry.registerShortcut(SignMethod.descriptor.name, SignMethod.shortcut(context))
    }

    /// Work that waits; auth failures become their protocol errors.
    static func later<T: Sendable>(_ work: @escaping @Sendable () async throws(AuthError) -> T, encode: @escaping @Sendable (T) -> JSONValue) -> RPCOutcome {
        .later {
            do throws(AuthError) {
                return encode(try await work())
            } catch {
                throw error.rpcError
            }
        }
    }

    /// The ordering of a method that names its provider in `provider`.
    static func provider(_ params: RPCParams, _ ordering: (String) -> RequestOrdering) -> RequestOrdering {
        guard case .string(let provider)? = params["provider"] else { return .free }
        return ordering(provider)
    }
}

extension AuthError {
    /// The same failure as a protocol error: `data` carries the reason a host switches on.
    public var rpcError: RPCError {
        var data: JSONObject = ["reason": .string(code.reason), "retryable": .bool(code.retryable)]
        if let provider { data["provider"] = .string(provider) }
        if let step { data["step"] = .string(step) }
        if let serverDescription { data["serverDescription"] = .string(serverDescription) }
        if let configKey { data["configKey"] = .string(configKey) }
        return RPCError(code: code.rawValue, message: message, data: .object(data))
    }
}
