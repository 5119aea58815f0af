import JSONRPC

extension AuthMethods {
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
