import JSON
import JSONRPC

/// `status`: every configured provider, its login state and what a login asks for.
public enum StatusMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "status", summary: "Every configured provider, its login state and what a login asks the user for.", result: "StatusResult")

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering { .free }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public static var name: String { descriptor.name }

    public static func encode(_ params: Void) -> JSONObject { [:] }

    public static func decode(params p: RPCParams) throws(RPCError) { try p.rejectUnknown(allowed: []) }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try decode(params: call.params)
        let choice = context.selections.choice(nil, on: call.connection)
        return .result(result(context.service.status(choice: choice), store: context.service.storeStatus))
    }

    /// `StatusResult` as a host reads it: the document (`status --json` prints it as is) and the
    /// few facts a host acts on, read from it in one place.
    public struct Result: Sendable {
        public let json: JSONValue

        public struct Provider: Sendable {
            public let json: JSONValue
            public var id: String { json["id"]?.stringValue ?? "" }
            public var displayName: String { json["displayName"]?.stringValue ?? id }
            public var flows: [Flow] { (json["flows"]?.arrayValue ?? [json["flow"] ?? .null]).compactMap { $0.stringValue.flatMap(Flow.init(rawValue:)) } }
            public var loggedIn: Bool { json["state"] == "loggedIn" }
            /// `device` where the agent prefers the device code to a browser nobody would see.
            public var interactive: String? { json["interactive"]?.stringValue }
            public var gitUsername: String? { json["gitUsername"]?.stringValue }
            /// Each account's id and what is known of its user.
            public var accounts: [(id: String, user: JSONValue?)] {
                (json["accounts"]?.arrayValue ?? []).map { ($0["id"]?.stringValue ?? "", $0["user"]) }
            }
        }

        public var providers: [Provider] { (json["providers"]?.arrayValue ?? []).map(Provider.init(json:)) }
        public var storeKind: String? { json["store"]?["kind"]?.stringValue }
        public func provider(_ id: String) -> Provider? { providers.first { $0.id == id } }
    }

    public static func encode(result: Result) -> JSONValue { result.json }

    public static func decode(result r: JSONValue) throws(RPCError) -> Result {
        guard r["providers"]?.arrayValue != nil else { throw .unreadableResult(name, "has no providers") }
        return Result(json: r)
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
