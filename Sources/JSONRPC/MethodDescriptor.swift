/// The one declaration of a protocol method: its name, params, result, errors
/// and a one-line doc. The registry is built from these, and a test checks
/// `schema/openrpc.json` against them in both directions.
public struct MethodDescriptor: Sendable {
    public enum Kind: Sendable { case request, notification }

    public struct Param: Sendable, Equatable {
        public let name: String
        public let required: Bool
        public init(_ name: String, required: Bool = false) {
            self.name = name
            self.required = required
        }
    }

    public let name: String
    public let kind: Kind
    public let summary: String
    public let params: [Param]
    /// The name of the result's schema in `components/schemas` of the OpenRPC document.
    public let result: String?
    /// Application error codes (beyond the standard JSON-RPC ones) the method may answer.
    public let errors: [Int]

    public init(_ name: String, kind: Kind = .request, summary: String, params: [Param] = [], result: String?, errors: [Int] = []) {
        self.name = name
        self.kind = kind
        self.summary = summary
        self.params = params
        self.result = result
        self.errors = errors
    }

    public var paramNames: [String] { params.map(\.name) }
}
