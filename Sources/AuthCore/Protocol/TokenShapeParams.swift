import JSON
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

extension TokenShape {
    /// The shape as `scopes`, `audience` and `resource` params (what `AuthMethods.shape` reads).
    func encode(into params: inout JSONObject) {
        if !scopes.isEmpty { params["scopes"] = .array(scopes.map(JSONValue.string)) }
        if let audience { params["audience"] = .string(audience) }
        if let resource { params["resource"] = .string(resource) }
    }
}

extension JSONObject {
    /// Sets `key` when there is a value: an absent param and a null one read the same.
    mutating func set(_ key: String, _ value: String?) {
        if let value { self[key] = .string(value) }
    }
}

extension JSONValue {
    /// A result's member the host cannot do without, or the error that says so.
    func required(_ key: String, of method: String) throws(RPCError) -> JSONValue {
        guard let value = self[key], value != .null else { throw .unreadableResult(method, "has no '\(key)'") }
        return value
    }
}
