import JSON
import JSONRPC
import Locking

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
        context.selections.select(id, provider: provider, on: call.connection)
        return .result(["provider": .string(provider), "account": id.map { .string($0) } ?? .null])
    }
}

/// `setDefaultAccount`: the account every agent on the store uses for requests
/// that name none and whose connection selected none.
enum SetDefaultAccountMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "setDefaultAccount", summary: "Make an account the provider's default, for every agent sharing the store.",
        params: [.init("provider", required: true), .init("account", required: true)], result: "AccountResult", errors: [1001, 1002, 1005, 1010])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        AuthMethods.provider(params, RequestOrdering.changes)
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        try call.params.rejectUnknown(allowed: descriptor.paramNames)
        let provider = try call.params.string("provider")
        let account = try call.params.string("account")
        let service = context.service
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.setDefaultAccount(provider: provider, account: account)
        }, encode: { ["provider": .string(provider), "account": .string($0)] })
    }
}

/// Each connection's `selectAccount` choices, by provider.
final class AccountSelections: Sendable {
    private let table = Locked([ObjectIdentifier: [String: String]]())

    func select(_ account: String?, provider: String, on connection: RPCConnection) {
        table.withLock { $0[ObjectIdentifier(connection), default: [:]][provider] = account }
    }

    /// Forgets a connection's choices when it closes; its identifier may be a later connection's.
    func release(_ connection: RPCConnection) {
        table.withLock { $0[ObjectIdentifier(connection)] = nil }
    }

    /// The account a request means: the one it names, else this connection's selection, else the default.
    func choice(_ account: String?, on connection: RPCConnection) -> AccountChoice {
        let selected = table.withLock { $0.isEmpty ? nil : $0[ObjectIdentifier(connection)] }
        return AccountChoice(account: account, selected: selected ?? [:])
    }
}

extension AuthMethods {
    /// The optional `account` param with the connection's selections.
    static func account(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> AccountChoice {
        let account = try call.params.optionalString("account")
        if account?.isEmpty == true { throw .invalidParams("'account' must not be empty") }
        return context.selections.choice(account, on: call.connection)
    }

    /// The optional `scopes`, `audience` and `resource` params; nil when none is given.
    static func shape(_ params: RPCParams) throws(RPCError) -> TokenShape? {
        let scopes = try params.optionalStringArray("scopes")
        let audience = try params.optionalString("audience")
        let resource = try params.optionalString("resource")
        guard scopes != nil || audience != nil || resource != nil else { return nil }
        if let problem = TokenShape.problem(scopes: scopes ?? [], audience: audience, resource: resource, naming: { part in
            switch part {
            case .scope(let i): return "'scopes[\(i)]'"
            case .audience: return "'audience'"
            case .resource: return "'resource'"
            }
        }) {
            throw .invalidParams(problem)
        }
        return TokenShape(scopes: scopes ?? [], audience: audience, resource: resource)
    }
}
