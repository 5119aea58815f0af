import JSON

/// What the bridge needs to know of one JSON-RPC message crossing it: its kind, the request
/// ids it waits answers for, and the MCP headers its body implies.
public struct MCPMessage: Sendable {
    public enum Kind: Sendable, Equatable { case request, notification, response, batch }

    public let value: JSONValue
    public let kind: Kind
    /// The ids of the requests in it (one, or a batch's), each owed exactly one answer.
    public let requestIds: [JSONValue]

    /// The stateless revision: each request names its method (and tool, prompt or resource) in headers.
    public static let statelessRevision = "2026-07-28"
    /// Where the stateless revision's requests carry their protocol version.
    public static let protocolVersionMetaKey = "io.modelcontextprotocol/protocolVersion"
    /// The parameter mirrored in `Mcp-Name`, by method (the SDK's `NAME_BEARING_METHODS`).
    static let nameParameters = ["tools/call": "name", "prompts/get": "name", "resources/read": "uri"]

    /// nil when `value` is no JSON-RPC message at all (then the host gets `-32600`).
    public init?(_ value: JSONValue) {
        self.value = value
        if let elements = value.arrayValue {
            guard !elements.isEmpty, elements.allSatisfy({ Self.kind(of: $0) != nil }) else { return nil }
            kind = .batch
            requestIds = elements.compactMap { Self.kind(of: $0) == .request ? $0["id"] : nil }
            return
        }
        guard let kind = Self.kind(of: value) else { return nil }
        self.kind = kind
        requestIds = kind == .request ? [value["id"]!] : []
    }

    /// Whether the server's `value` may be written to the host: MCP's stdio transport carries
    /// nothing but JSON-RPC 2.0 messages — an object stating `"jsonrpc": "2.0"` with a method, or
    /// with an id and a result or an error.
    public static func isMessage(_ value: JSONValue) -> Bool {
        value["jsonrpc"] == "2.0" && kind(of: value) != nil
    }

    private static func kind(of value: JSONValue) -> Kind? {
        guard value.objectValue != nil else { return nil }
        let id = value["id"]
        if value["method"]?.stringValue != nil { return id == nil ? .notification : .request }
        if id != nil, value["result"] != nil || value["error"] != nil { return .response }
        return nil
    }

    public var method: String? { value["method"]?.stringValue }

    /// The protocol version this message states itself (the stateless revision's `_meta`).
    public var statedProtocolVersion: String? { value["params"]?["_meta"]?[Self.protocolVersionMetaKey]?.stringValue }

    /// `Mcp-Method` and `Mcp-Name` for the stateless revision, from the body they must match.
    public func routingHeaders() -> [(String, String)] {
        guard let method else { return [] }
        var headers = [("Mcp-Method", method)]
        if let key = Self.nameParameters[method], let name = value["params"]?[key]?.stringValue {
            headers.append(("Mcp-Name", Self.headerValue(name)))
        }
        return headers
    }

    /// A value as it survives an HTTP field: printable ASCII without edge spaces as is, anything
    /// else in the `=?base64?…?=` form the MCP SDKs decode.
    static func headerValue(_ text: String) -> String {
        let printable = text.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
        let trimmed = text.first != " " && text.last != " "
        if printable, trimmed, !(text.hasPrefix("=?base64?") && text.hasSuffix("?=")) { return text }
        return "=?base64?" + Base64.encode(Array(text.utf8)) + "?="
    }

    /// A JSON-RPC error answer to the request `id`.
    public static func error(id: JSONValue, code: Int, message: String, data: JSONObject = [:]) -> JSONValue {
        var error: JSONObject = ["code": .int(Int64(code)), "message": .string(message)]
        if !data.isEmpty { error["data"] = .object(data) }
        return ["jsonrpc": "2.0", "id": id, "error": .object(error)]
    }
}

/// Standard base64 with padding (RFC 4648 §4), for `Mcp-Name` values that are not plain ASCII.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let chunk = Array(bytes[i..<min(i + 3, bytes.count)])
            let n = (UInt32(chunk[0]) << 16) | (chunk.count > 1 ? UInt32(chunk[1]) << 8 : 0) | (chunk.count > 2 ? UInt32(chunk[2]) : 0)
            for k in 0..<4 {
                out.append(k <= chunk.count ? alphabet[Int((n >> (18 - 6 * UInt32(k))) & 63)] : UInt8(ascii: "="))
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}
