import JSON
import JSONRPC

/// `selectAccount`: which account this connection's requests use for a provider
/// when they name none. Per connection, never global: two hosts can work as two
/// users of one provider at once.
enum SelectAccountMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "selectAccount", summary: "Use this account of the provider for this connection's requests that name none; null goes back to the default.",
        params: [.init("provider", required: true), .init("account", required: true)], result: "AccountResult", errors: [1001, 1002, 1010])

    /// Later requests of the provider must see the selection, so it is ordered like a change.
    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        guard let value = call.params.object["account"] else { throw .invalidParams("'account' is required (a string, or null for the default)") }
        let account: String?
        switch value {
        case .null: account = nil
        case .string(let s) where !s.isEmpty: account = s
        default: throw .invalidParams("'account' must be a non-empty string or null")
        }
        // The selection keeps the id the name resolves to: a name is looked up once, here.
        let id: String?
        do {
            id = try context.service.checkAccount(provider: provider, account: account)
        } catch {
            throw error.rpcError
        }
        try context.selections.select(id, provider: provider, on: call.connection)
        return .result(["provider": .string(provider), "account": id.map { .string($0) } ?? .null])
    }
}

