import JSON

/// One answer to one request: a result or an error, for an id.
///
/// Written straight into the output buffer without building an intermediate
/// `JSONObject`; this is the per-message hot path.
public struct RPCResponse: Sendable {
    public let id: JSONValue
    public let outcome: Result<JSONValue, RPCError>

    public init(id: JSONValue, result: JSONValue) {
        self.id = id
        self.outcome = .success(result)
    }

    public init(id: JSONValue, error: RPCError) {
        self.id = id
        self.outcome = .failure(error)
    }

    public func write(to out: inout [UInt8]) {
        out.append(contentsOf: Self.prefix)
        JSONSerializer.write(id, to: &out)
        switch outcome {
        case .success(let value):
            out.append(contentsOf: Self.resultKey)
            JSONSerializer.write(value, to: &out)
        case .failure(let error):
            out.append(contentsOf: Self.errorKey)
            JSONSerializer.write(error.json, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    public var json: JSONValue {
        var o: JSONObject = ["jsonrpc": "2.0", "id": id]
        switch outcome {
        case .success(let v): o["result"] = v
        case .failure(let e): o["error"] = e.json
        }
        return .object(o)
    }

    private static let prefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
    private static let resultKey = Array(#","result":"#.utf8)
    private static let errorKey = Array(#","error":"#.utf8)
}
