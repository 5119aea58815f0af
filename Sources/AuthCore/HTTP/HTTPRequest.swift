/// One HTTP exchange the agent wants made, independent of the HTTP stack so
/// that flows can be tested against a scripted `HTTPTransport`.
///
/// Headers and body usually hold secrets (an `Authorization` header, a password
/// in a form body), so `description` and the mirror show only the method and the
/// URL without its query.
public struct HTTPRequest: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var method: String
    public var url: String
    /// Name and value pairs in order; a name may repeat.
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Seconds for the whole exchange.
    public var timeout: Double
    /// A response body larger than this fails the exchange; nil: the transport's own cap (1 MiB),
    /// which suits auth servers. `fetch` sets the host's limit for API responses.
    public var maxResponseBytes: Int?
    public var lane: Lane

    /// Which traffic an exchange belongs to, so the transport keeps the two apart: a host's
    /// requests parked on a slow API never delay a token refresh or a login.
    public enum Lane: Sendable {
        /// The agent's own calls to an auth server (token, device, userinfo, revocation, session
        /// endpoints): they carry credentials and are never queued.
        case authServer
        /// A host's request to an API (`fetch`): the transport may bound how many run at once.
        case resource
    }

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                timeout: Double = 30, maxResponseBytes: Int? = nil, lane: Lane = .authServer) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.lane = lane
    }

    /// The value of the first header with this name, compared case-insensitively.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }

    public var description: String {
        let end = url.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? url.endIndex
        return "\(method) \(url[..<end])"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["request": description, "timeout": timeout], displayStyle: .struct)
    }
}
