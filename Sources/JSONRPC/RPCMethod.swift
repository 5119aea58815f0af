import JSON

/// A method as both ends see it — its name, its params and result as Swift values, and how
/// each crosses as JSON, declared once (the MCP swift-sdk's `Method` with `Parameters`/`Result`):
/// the handler decodes the params a Swift host encoded with the same declaration, and the host
/// decodes the result the handler encoded, so neither end re-encodes JSON by hand.
public protocol RPCMethod {
    associatedtype Params: Sendable
    associatedtype Result: Sendable
    static var name: String { get }
    /// The host's side: the params as sent.
    static func encode(_ params: Params) -> JSONObject
    /// The handler's side: the params as received, every mismatch a `-32602` naming the field.
    static func decode(params: RPCParams) throws(RPCError) -> Params
    /// The handler's side: the result as answered.
    static func encode(result: Result) -> JSONValue
    /// The host's side: the result as received; what it lacks is an error, not a guess.
    static func decode(result: JSONValue) throws(RPCError) -> Result
}

extension RPCError {
    /// A result the host cannot read: the agent and the host disagree about a method.
    public static func unreadableResult(_ method: String, _ detail: String) -> RPCError {
        RPCError(code: -32603, message: "Internal error: the answer to \(method) \(detail)")
    }
}
