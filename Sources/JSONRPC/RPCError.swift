import JSON

/// A JSON-RPC error object: what a handler throws and what the host receives.
///
/// The standard codes live here; applications add their own (auth-agent uses
/// 1001…1010) by constructing an `RPCError` with their code and `data`.
public struct RPCError: Error, Sendable, Equatable {
    public var code: Int
    public var message: String
    public var data: JSONValue?

    public init(code: Int, message: String, data: JSONValue? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    public static func parseError(_ detail: String) -> RPCError {
        RPCError(code: -32700, message: "Parse error: \(detail)")
    }
    public static func invalidRequest(_ detail: String) -> RPCError {
        RPCError(code: -32600, message: "Invalid Request: \(detail)")
    }
    public static func methodNotFound(_ method: String) -> RPCError {
        RPCError(code: -32601, message: "Method not found: \(method)")
    }
    public static func invalidParams(_ detail: String) -> RPCError {
        RPCError(code: -32602, message: "Invalid params: \(detail)")
    }
    public static func internalError(_ detail: String = "the agent failed unexpectedly") -> RPCError {
        RPCError(code: -32603, message: "Internal error: \(detail)")
    }
    public static let requestCancelled = RPCError(code: -32800, message: "Request cancelled")

    public var json: JSONValue {
        var o: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if let data { o["data"] = data }
        return .object(o)
    }
}
