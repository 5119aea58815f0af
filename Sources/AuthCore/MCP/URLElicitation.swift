import JSON

/// Issue 33 item 5: URL-mode elicitation (MCP 2025-11-25, `client/elicitation`, "URL Mode
/// Elicitation Requests"). A server sends `elicitation/create` with `mode: "url"`, a `message`, a
/// `url` and an `elicitationId` to send the person to a page of its own — a third party's OAuth, an
/// API key, a payment — that must not pass through the client; it may later send
/// `notifications/elicitation/complete` with that `elicitationId`. A client declares the mode in
/// `capabilities.elicitation.url`; `elicitation: {}` means form mode only, and "Servers MUST NOT send
/// elicitation requests with modes that are not supported by the client".
///
/// Many hosts have no browser of their own to open, but the agent does (its logins open one). So
/// the bridge declares URL mode to the server for every host, passes a URL elicitation through to a
/// host that declared it (nothing added), and opens it itself for a host that did not, under the
/// login's browser rules. The spec's note: "The MCP client's bearer token remains unchanged. The
/// client's only responsibility is to provide the user with context about the elicitation URL" —
/// the URL is handed to a browser, never requested by the agent, so no token of the agent goes there.
public struct URLElicitation: Sendable, Equatable {
    /// The answer the bridge gives the server (the spec's "Response Actions"): `accept` once the
    /// browser was opened (the interaction itself is out of band, "It does not mean that the
    /// interaction is complete"); `cancel` when nobody could be shown it for sure (no browser here:
    /// the URL only printed on stderr, "browser failed to load" is the spec's example of cancel);
    /// `decline` when the agent refuses the URL itself (it may not be opened: `BrowserURL`).
    public enum Action: String, Sendable { case accept, decline, cancel }

    /// The server's JSON-RPC id of the request.
    public let id: JSONValue
    public let url: String
    public let message: String
    public let elicitationId: String?

    /// A URL-mode `elicitation/create` request of the server; nil for any other message (form mode included).
    public init?(request: JSONValue) {
        guard request["method"] == "elicitation/create", let id = request["id"], let elicitation = Self(id: id, params: request["params"]) else { return nil }
        self = elicitation
    }

    /// A URL-mode elicitation asked with `params` (an `input_required` result's input request, or a
    /// request's params); nil when it is of another mode. A missing `url` is kept empty: it is refused (`problem`).
    public init?(id: JSONValue, params: JSONValue?) {
        guard params?["mode"] == "url" else { return nil }
        self.id = id
        url = params?["url"]?.stringValue ?? ""
        message = params?["message"]?.stringValue ?? ""
        elicitationId = params?["elicitationId"]?.stringValue
    }

    /// Why the URL may not be shown or opened (as a login URL: https, or http to loopback, no user
    /// name or password), nil when it may.
    public var problem: String? { BrowserURL.problem(url) }

    /// The result the server gets for `action` (URL mode has no `content`).
    public func result(_ action: Action) -> JSONValue { ["action": .string(action.rawValue)] }

    /// The JSON-RPC answer to the server's request.
    public func answer(_ action: Action) -> JSONValue { ["jsonrpc": "2.0", "id": id, "result": result(action)] }

    /// `URLElicitationRequiredError`'s code: the server answers a request with the URL elicitations
    /// to complete before it is retried (`error.data.elicitations`, each in URL mode with an `elicitationId`).
    public static let requiredErrorCode = -32042

    /// The elicitations of a `-32042` answer; empty for any other message.
    public static func required(in answer: JSONValue) -> [URLElicitation] {
        guard answer["method"] == nil, answer["error"]?["code"]?.intValue.map(Int.init) == requiredErrorCode else { return [] }
        return (answer["error"]?["data"]?["elicitations"]?.arrayValue ?? []).compactMap { URLElicitation(id: .null, params: $0) }
    }

    // MARK: The decision

    /// Whether `capabilities` (an `initialize`'s, or the stateless revision's
    /// `io.modelcontextprotocol/clientCapabilities`) declare URL-mode elicitation.
    public static func declared(in capabilities: JSONValue?) -> Bool {
        capabilities?["elicitation"]?["url"]?.objectValue != nil
    }

    /// What the bridge does with a server message for a host that declared URL mode or not: a URL
    /// elicitation is the host's when it declared the mode, else the bridge's (a request it answers
    /// itself; a `-32042` answer whose pages it opens, the error passed on for the host to retry);
    /// everything else passes.
    public enum Handling: Sendable, Equatable { case passThrough, openHere, openBeforeRetry([URLElicitation]), dropCompletion }

    public static func handling(_ message: JSONValue, hostOpensURLs: Bool) -> Handling {
        if hostOpensURLs { return .passThrough }
        if URLElicitation(request: message) != nil { return .openHere }
        let required = required(in: message)
        if !required.isEmpty { return .openBeforeRetry(required) }
        // "Clients MUST ignore notifications referencing unknown … IDs": a host that never saw the
        // elicitation has no use for its completion.
        if message["method"] == "notifications/elicitation/complete" { return .dropCompletion }
        return .passThrough
    }

    /// The capabilities the bridge declares to the server in a host's stead: the host's, with
    /// `elicitation.url` added when it lacks it (the bridge opens those URLs), `elicitation: {}`
    /// spelled `{form: {}}` first so the form mode it means stays declared. Unchanged (the same
    /// value) when the host declared URL mode itself.
    public static func declaring(_ capabilities: JSONValue) -> JSONValue {
        guard !declared(in: capabilities), var object = capabilities.objectValue else { return capabilities }
        var elicitation = object["elicitation"]?.objectValue
        if elicitation?.isEmpty == true { elicitation?["form"] = .object([:]) }
        var declared = elicitation ?? [:]
        declared["url"] = .object([:])
        object["elicitation"] = .object(declared)
        return .object(object)
    }

    /// The revision that brought URL mode: an older session has no such request to send.
    public static let firstRevision = "2025-11-25"

    /// An `initialize` request with `declaring` applied to its capabilities when it offers a revision
    /// that has URL mode; the same value when nothing changes (then its bytes go as the host wrote them).
    public static func declaringInInitialize(_ initialize: JSONValue) -> JSONValue {
        guard var object = initialize.objectValue, var params = object["params"]?.objectValue,
              let version = params["protocolVersion"]?.stringValue, version >= firstRevision else { return initialize }
        let capabilities = params["capabilities"] ?? .object([:])
        guard !declared(in: capabilities) else { return initialize }
        params["capabilities"] = declaring(capabilities)
        object["params"] = .object(params)
        return .object(object)
    }
}
