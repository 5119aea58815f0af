import JSON
import JSONRPC

/// `status`: every configured provider, its login state and what a login asks for.
enum StatusMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "status", summary: "Every configured provider, its login state and what a login asks the user for.", result: "StatusResult")

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering { .free }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: [])
        let choice = context.selections.choice(nil, on: call.connection)
        return .result(result(context.service.status(choice: choice), store: context.service.storeStatus))
    }

    /// The `StatusResult` (also inside `subscribe`'s answer).
    static func result(_ providers: [ProviderStatus], store: StoreStatus?) -> JSONValue {
        var o: JSONObject = [:]
        if let store {
            var s: JSONObject = ["kind": .string(store.kind.rawValue)]
            if let reason = store.reason { s["reason"] = .string(reason) }
            o["store"] = .object(s)
        }
        o["providers"] = .array(providers.map(json))
        return .object(o)
    }

    static func json(_ p: ProviderStatus) -> JSONValue {
        var entry: JSONObject = [
            "id": .string(p.id), "displayName": .string(p.displayName), "flow": .string(p.flow.rawValue),
            "flows": .array(p.flows.map { .string($0.rawValue) }),
            "fields": .array(p.fields.map { ["name": .string($0.name), "label": .string($0.label), "secret": .bool($0.secret)] }),
        ]
        if let session = p.session {
            entry["state"] = "loggedIn"
            entry["user"] = session.user
            entry["expiresAt"] = RFC3339.json(session.expiresAt)
        } else {
            entry["state"] = "loggedOut"
        }
        if let account = p.account { entry["account"] = .string(account) }
        entry["accounts"] = .array(p.accounts.map { a in
            ["id": .string(a.id), "user": a.user, "expiresAt": RFC3339.json(a.expiresAt), "default": .bool(a.isDefault)]
        })
        if let learned = p.learned {
            entry["learned"] = true
            entry["resource"] = .string(learned.resource)
            entry["covers"] = .array(learned.coverage.map(JSONValue.string))
            entry["issuer"] = .string(learned.issuer)
        }
        if let gitUsername = p.gitUsername { entry["gitUsername"] = .string(gitUsername) }
        if let interactive = p.interactive { entry["interactive"] = .string(interactive) }
        if !p.unreadable.isEmpty {
            entry["unreadable"] = .array(p.unreadable.map { ["account": .string($0.account), "reason": .string($0.reason)] })
        }
        return .object(entry)
    }
}
