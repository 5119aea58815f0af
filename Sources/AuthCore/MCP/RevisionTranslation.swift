import JSON

/// Issue 33 item 1: a host and a server on either side of MCP's 2026-07-28 break (the stateless
/// revision: no `initialize`, version and capabilities in every request's `_meta`, multi-round-trip
/// results instead of server-to-host requests). Each function turns one message of one revision
/// into its counterpart; the bridge (MCPBridgeRevisions.swift) decides when, and does the I/O.
public enum RevisionTranslation {
    /// Which side the bridge stands in for, once the first exchange told it both revisions.
    public enum Mode: Sendable, Equatable {
        /// A host of the `initialize` handshake before a stateless server: the bridge answered
        /// `initialize` itself and puts the host's version and capabilities into every request.
        case statelessServer(HostSession)
        /// A stateless host before a session-based server: the bridge ran `initialize` once and keeps the session.
        case sessionServer(discovered: JSONValue)
    }

    /// What an `initialize`-handshake host said once, which the stateless server needs with every request.
    public struct HostSession: Sendable, Equatable {
        public var capabilities: JSONValue
        public var clientInfo: JSONValue?
        /// `logging/setLevel`, kept for the `io.modelcontextprotocol/logLevel` of the requests after it.
        public var logLevel: String?
    }

    /// The revisions before the stateless one that the bridge answers `initialize` with (MCP's
    /// Streamable HTTP began at 2025-03-26); another asked for gets the newest of them.
    public static let sessionRevisions = ["2025-03-26", "2025-06-18", "2025-11-25"]
    /// The revisions `--protocol-version` takes.
    public static let knownRevisions = sessionRevisions + [MCPMessage.statelessRevision]
    static let capabilitiesMetaKey = "io.modelcontextprotocol/clientCapabilities"
    static let clientInfoMetaKey = "io.modelcontextprotocol/clientInfo"
    static let logLevelMetaKey = "io.modelcontextprotocol/logLevel"
    static let serverInfoMetaKey = "io.modelcontextprotocol/serverInfo"
    /// Results a 2026 host caches, which must say for whom and how long (`CacheableResult`).
    static let cacheableMethods: Set<String> = ["tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]

    public static func isStateless(_ version: String) -> Bool { version >= MCPMessage.statelessRevision }

    /// Whether a server's refusal of the host's first message (`initialize` or `server/discover`)
    /// says it may speak the other era: method not found, an unsupported version, or a bare
    /// 400/404/405 — not a failure (5xx, a refused login, a transport error), which stays the answer.
    public static func invitesOtherEra(_ answer: JSONValue) -> Bool {
        guard let error = answer["error"] else { return false }
        if let status = error["data"]?["status"]?.intValue { return [400, 404, 405].contains(status) }
        guard let code = error["code"]?.intValue else { return false }
        return [-32601, -32600, -32022, -32000].contains(code)
    }

    // MARK: A session host before a stateless server

    /// The host's `initialize` offering `version` (`--protocol-version`) instead of its own; as it is without one.
    public static func offering(_ initialize: JSONValue, version: String?) -> JSONValue {
        guard let version, var object = initialize.objectValue else { return initialize }
        var params = object["params"]?.objectValue ?? [:]
        params["protocolVersion"] = .string(version)
        object["params"] = .object(params)
        return .object(object)
    }

    /// Whether `server/discover`'s answer lists the stateless revision.
    public static func speaksStateless(_ answer: JSONValue) -> Bool {
        answer["result"]?["supportedVersions"]?.arrayValue?.contains(.string(MCPMessage.statelessRevision)) == true
    }

    /// The host's `initialize` as the bridge keeps it.
    public static func hostSession(from initialize: JSONValue) -> HostSession {
        // URL-mode elicitation declared for every host: the bridge opens the URLs of a host that cannot (URLElicitation).
        HostSession(capabilities: URLElicitation.declaring(initialize["params"]?["capabilities"] ?? .object([:])), clientInfo: initialize["params"]?["clientInfo"])
    }

    /// The `server/discover` the bridge asks in the host's stead, under the host's request id.
    public static func discoverRequest(id: JSONValue, for host: HostSession) -> JSONValue {
        ["jsonrpc": "2.0", "id": id, "method": "server/discover", "params": ["_meta": .object(meta(for: host))]]
    }

    /// `initialize`'s answer made from `server/discover`'s: the server's info, capabilities and
    /// instructions, at the revision the host asked for when the bridge knows it.
    public static func initializeResult(id: JSONValue, discovered: JSONValue, hostVersion: String?) -> JSONValue {
        var result: JSONObject = [
            "protocolVersion": .string(hostVersion.flatMap { sessionRevisions.contains($0) ? $0 : nil } ?? sessionRevisions.last!),
            "capabilities": discovered["capabilities"] ?? .object([:]),
            "serverInfo": discovered["_meta"]?[serverInfoMetaKey] ?? ["name": "mcp-server", "version": "unknown"],
        ]
        if let instructions = discovered["instructions"] { result["instructions"] = instructions }
        return ["jsonrpc": "2.0", "id": id, "result": .object(result)]
    }

    /// A request of the host with what the stateless revision wants in its `_meta`; whatever else
    /// the host put there (a `progressToken`) kept.
    public static func stateless(_ request: JSONValue, for host: HostSession) -> JSONValue {
        guard var object = request.objectValue else { return request }
        var params = object["params"]?.objectValue ?? [:]
        var meta = params["_meta"]?.objectValue ?? [:]
        for (key, value) in Self.meta(for: host).members { meta[key] = value }
        params["_meta"] = .object(meta)
        object["params"] = .object(params)
        return .object(object)
    }

    /// The same request again, once the host answered what the server asked (`inputResponses`,
    /// and the server's `requestState` handed back as it came).
    public static func retried(_ request: JSONValue, responses: JSONObject, state: JSONValue?) -> JSONValue {
        guard var object = request.objectValue else { return request }
        var params = object["params"]?.objectValue ?? [:]
        params["inputResponses"] = responses.isEmpty ? nil : .object(responses)
        params["requestState"] = state
        object["params"] = .object(params)
        return .object(object)
    }

    /// An `input_required` result's requests of the host, in key order: (key, method, params).
    public static func inputRequests(_ answer: JSONValue) -> [(key: String, method: String, params: JSONValue?)]? {
        guard let result = answer["result"], result["resultType"] == "input_required" else { return nil }
        let requests = result["inputRequests"]?.objectValue ?? [:]
        return requests.keys.sorted().compactMap { key in
            guard let method = requests[key]?["method"]?.stringValue else { return nil }
            return (key, method, requests[key]?["params"])
        }
    }

    /// A stateless result as the session revisions have it: without `resultType` and the cache hints.
    public static func sessionAnswer(_ answer: JSONValue) -> JSONValue {
        guard var object = answer.objectValue, var result = object["result"]?.objectValue else { return answer }
        for key in ["resultType", "cacheScope", "ttlMs"] { result[key] = nil }
        object["result"] = .object(result)
        return .object(object)
    }

    private static func meta(for host: HostSession) -> JSONObject {
        var meta: JSONObject = [MCPMessage.protocolVersionMetaKey: .string(MCPMessage.statelessRevision), capabilitiesMetaKey: host.capabilities]
        if let info = host.clientInfo { meta[clientInfoMetaKey] = info }
        if let level = host.logLevel { meta[logLevelMetaKey] = .string(level) }
        return meta
    }

    // MARK: A stateless host before a session-based server

    /// The `initialize` the bridge runs once, under the id of the host's `server/discover`, with the
    /// capabilities and client info of that request's `_meta`.
    public static func initializeRequest(id: JSONValue, version: String, from discover: JSONValue) -> JSONValue {
        let meta = discover["params"]?["_meta"]
        return URLElicitation.declaringInInitialize(["jsonrpc": "2.0", "id": id, "method": "initialize", "params": [
            "protocolVersion": .string(version),
            "capabilities": meta?[capabilitiesMetaKey] ?? .object([:]),
            "clientInfo": meta?[clientInfoMetaKey] ?? ["name": "auth-agent", "version": "1"],
        ]])
    }

    /// `server/discover`'s result made from `initialize`'s (without the JSON-RPC envelope): what the
    /// bridge answers every `server/discover` of the host with.
    public static func discoverResult(initialized: JSONValue) -> JSONValue {
        let result = initialized["result"]
        var discovered: JSONObject = [
            "supportedVersions": [.string(MCPMessage.statelessRevision)],
            "capabilities": result?["capabilities"] ?? .object([:]),
            "resultType": "complete", "cacheScope": "private", "ttlMs": 0,
        ]
        if let instructions = result?["instructions"] { discovered["instructions"] = instructions }
        if let info = result?["serverInfo"] { discovered["_meta"] = [serverInfoMetaKey: info] }
        return .object(discovered)
    }

    /// A stateless host's message without the `_meta` keys of the stateless revision, which a
    /// session-based server does not know (they live in the session and the headers there).
    public static func withoutStatelessMeta(_ message: JSONValue) -> JSONValue {
        guard var object = message.objectValue, var params = object["params"]?.objectValue, let meta = params["_meta"]?.objectValue else { return message }
        var kept = JSONObject()
        for (key, value) in meta.members where !key.hasPrefix("io.modelcontextprotocol/") { kept[key] = value }
        params["_meta"] = kept.isEmpty ? nil : .object(kept)
        object["params"] = .object(params)
        return .object(object)
    }

    /// A stateless host's `notifications/cancelled` of a retry, as the session server knows the request:
    /// by the id of the held request it answers (`answeredAs`: held request → the host's id for it now).
    public static func cancellation(_ message: JSONValue, answeredAs: [JSONValue: JSONValue]) -> JSONValue {
        guard message["method"] == "notifications/cancelled", var object = message.objectValue, var params = object["params"]?.objectValue,
              let target = params["requestId"], let held = answeredAs.first(where: { $0.value == target })?.key else { return message }
        params["requestId"] = held
        object["params"] = .object(params)
        return .object(object)
    }

    /// The bridge's answer, for a stateless host, to a session server's request outside any request's
    /// stream (its GET stream): the 2026-07-28 revision takes server requests only as a request's
    /// `input_required`, so nothing could carry this one to the host. Nil for anything but a request.
    public static func refusalForStatelessHost(_ message: JSONValue) -> JSONValue? {
        guard let id = message["id"], let method = message["method"]?.stringValue else { return nil }
        return MCPMessage.error(id: id, code: -32601, message: "The host speaks MCP 2026-07-28, which takes \(method) only within one of its requests")
    }

    /// The server-to-host requests of the session revisions that a multi-round-trip result carries instead.
    public static let inputMethods: Set<String> = ["elicitation/create", "sampling/createMessage", "roots/list"]

    /// A session server's request to the host, as the `input_required` answer a 2026 host takes
    /// it in; `key` is both its key and the `requestState` the host's retry hands back.
    public static func inputRequired(id: JSONValue, key: String, request: JSONValue) -> JSONValue {
        var asked: JSONObject = ["method": request["method"] ?? .null]
        if let params = request["params"] { asked["params"] = params }
        return ["jsonrpc": "2.0", "id": id, "result": ["resultType": "input_required", "inputRequests": [key: .object(asked)], "requestState": .string(key)]]
    }

    /// An answer under another id: the host's retry is answered with what the server answered the
    /// request it retried.
    public static func answering(_ answer: JSONValue, as id: JSONValue) -> JSONValue {
        guard var object = answer.objectValue else { return answer }
        object["id"] = id
        return .object(object)
    }

    /// A session server's answer to `method` as a 2026 host requires it: `resultType`, and for
    /// results it caches `cacheScope` (private: the bridge's answers are one login's) and `ttlMs` 0.
    public static func statelessAnswer(_ answer: JSONValue, method: String?) -> JSONValue {
        guard var object = answer.objectValue, var result = object["result"]?.objectValue else { return answer }
        if result["resultType"] == nil { result["resultType"] = "complete" }
        if let method, cacheableMethods.contains(method) {
            if result["cacheScope"] == nil { result["cacheScope"] = "private" }
            if result["ttlMs"] == nil { result["ttlMs"] = 0 }
        }
        object["result"] = .object(result)
        return .object(object)
    }
}
