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
        Self.append(#"{"jsonrpc":"2.0","id":"#, to: &out)
        JSONSerializer.write(id, to: &out)
        switch body {
        case .result(let value):
            Self.append(#","result":"#, to: &out)
            JSONSerializer.write(value, to: &out)
        case .encodedResult(let text):
            Self.append(#","result":"#, to: &out)
            out.append(contentsOf: text.bytes)
        case .error(let error):
            Self.append(#","error":"#, to: &out)
            JSONSerializer.write(error.json, to: &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// From the binary's constant text: no array to retain and release per answer.
    @inline(__always)
    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        out.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
