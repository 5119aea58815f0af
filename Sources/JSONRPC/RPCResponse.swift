import JSON

/// One answer to one request: a result or an error, for an id.
///
/// Written straight into the output buffer without building an intermediate
/// `JSONObject`; this is the per-message hot path.
public struct RPCResponse: Sendable {
    public enum Body: Sendable {
        case result(JSONValue)
        case encodedResult(JSONText)
        case error(RPCError)
    }

    public let id: JSONValue
    public let body: Body

    public init(id: JSONValue, result: JSONValue) {
        self.id = id
        self.body = .result(result)
    }

    public init(id: JSONValue, encodedResult: JSONText) {
        self.id = id
        self.body = .encodedResult(encodedResult)
    }

    public init(id: JSONValue, error: RPCError) {
        self.id = id
        self.body = .error(error)
    }

    public func write(to out: inout [UInt8]) {
        out.append(contentsOf: Self.prefix)
        JSONSerializer.write(id, to: &out)
        switch body {
        case .result(let value):
            out.append(contentsOf: Self.resultKey)
            JSONSerializer.write(value, to: &out)
        case .encodedResult(let text):
            out.append(contentsOf: Self.resultKey)
            out.append(contentsOf: text.bytes)
        case .error(let error):
            out.append(contentsOf: Self.errorKey)
            JSONSerializer.write(error.json, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static let prefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let resultKey = Array(#","result":"#.utf8)
    private static let errorKey = Array(#","error":"#.utf8)
}
