import JSON
import JSONRPC

/// `subscribe`: this connection's notifications; answers the current status too.
enum SubscribeMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "subscribe", summary: "Receive login-state notifications; answers the events subscribed and the current status.",
        params: [.init("events"), .init("providers")], result: "SubscribeResult", errors: [1002])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering { .free }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
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
        for p in providers ?? [] where !context.service.knows(p) {
            throw AuthError.unknownProvider(p, .notConfigured(known: nil)).rpcError
        }
        let filter = providers.map(Set.init)
        try AuthHost.of(call.connection).subscribe(call.connection, events: Set(events), providers: filter)
        return .result(["events": .array(events.map { .string($0.rawValue) }),
                        "status": StatusMethod.result(context.service.status(providers: filter, choice: context.selections.choice(nil, on: call.connection)),
                                                            store: context.service.storeStatus)])
    }
}

/// `unsubscribe`: no more notifications on this connection.
enum UnsubscribeMethod: AuthMethod {
    static let descriptor = MethodDescriptor("unsubscribe", summary: "Stop receiving notifications.", result: "EmptyResult")

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering { .free }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: [])
        try AuthHost.of(call.connection).unsubscribe()
        return .result([:])
    }
}
