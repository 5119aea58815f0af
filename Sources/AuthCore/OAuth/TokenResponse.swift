import JSON

/// The useful part of a successful OAuth 2.0 token endpoint response (RFC 6749 §5.1).
///
/// Normalised on the way in: `token_type` defaults to `Bearer` and any casing of
/// "bearer" becomes `Bearer`, of "dpop" `DPoP` (servers vary, the `Authorization` header wants one
/// spelling); `expires_in` is accepted as a number or a numeric string because
/// real servers send both. An `expires_in` that cannot be a lifetime (negative,
/// not a number, beyond 68 years) is not taken as "never expires": the token
/// gets `defaultLifetime`, so it is refreshed like any other, and
/// `expiresInProblem` says why. The description shows no token.
public struct TokenResponse: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessToken: String
    public var tokenType: String
    /// Seconds from receipt until the access token expires, when the server says.
    public var expiresIn: Int?
    public var refreshToken: String?
    public var idToken: String?
    public var scope: String?
    /// Set when the server's `expires_in` was unusable and `defaultLifetime` was used instead.
    public var expiresInProblem: String?
    /// The DPoP key the request that got this answer proved (set by `OAuthClient`, never read from JSON).
    public var dpopKey: DPoPKey?

    /// The lifetime assumed for a token whose `expires_in` is unusable: short
    /// enough that a token the server retires early is replaced soon.
    public static let defaultLifetime = 3600

    /// What is wrong with a token response, naming the member, never quoting a value.
    public struct Malformed: Error, Sendable, Equatable {
        public let problem: String
    }

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int? = nil, refreshToken: String? = nil,
                idToken: String? = nil, scope: String? = nil, expiresInProblem: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
        self.expiresInProblem = expiresInProblem
    }

    /// Reads a token response object. Throws when `access_token` is missing or
    /// not a string that fits an `Authorization` header (`AuthorizationToken`),
    /// when `token_type` does not fit one either, or when another token holds
    /// characters outside printable ASCII (RFC 6749 Appendix A).
    public init(json: JSONObject) throws(Malformed) {
        guard let value = json["access_token"] else { throw Malformed(problem: "it has no access_token") }
        guard let token = value.stringValue else { throw Malformed(problem: "its access_token is \(value.kindName), not a string") }
        guard AuthorizationToken.isValid(token) else {
            throw Malformed(problem: token.isEmpty ? "its access_token is empty" : "its access_token contains \(AuthorizationToken.rule)")
        }
        accessToken = token
        let type = json["token_type"]?.stringValue ?? "Bearer"
        guard type.isEmpty || AuthorizationToken.isValid(type) else {
            throw Malformed(problem: "its token_type contains \(AuthorizationToken.rule)")
        }
        switch type.lowercased() {
        case "bearer", "": tokenType = "Bearer"
        case "dpop": tokenType = "DPoP"  // RFC 9449 §5; compared case-insensitively, as `bearer` is
        default: tokenType = type
        }
        if let given = json["expires_in"], !given.isNull {
            if let seconds = TokenResponse.seconds(given) {
                expiresIn = seconds
            } else {
                expiresIn = TokenResponse.defaultLifetime
                expiresInProblem = "its expires_in is not a usable number of seconds; assuming \(TokenResponse.defaultLifetime) s"
            }
        }
        refreshToken = json["refresh_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        idToken = json["id_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        scope = json["scope"]?.stringValue
        for (name, other) in [("refresh_token", refreshToken), ("id_token", idToken)] {
            if let other, !TokenResponse.isTokenText(other) { throw Malformed(problem: "its \(name) contains characters outside printable ASCII") }
        }
    }

    /// Non-empty printable ASCII (`%x20-7E`): what RFC 6749 allows in refresh
    /// and ID tokens, which travel in form bodies, never in a header.
    public static func isTokenText(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// Whole non-negative seconds from a number or a string of digits; `nil` otherwise.
    static func seconds(_ value: JSONValue) -> Int? {
        switch value {
        case .int(let i): return i >= 0 && i <= Int64(Int32.max) ? Int(i) : nil
        case .double(let d): return d.isFinite && d >= 0 && d <= Double(Int32.max) ? Int(d) : nil
        case .string(let s):
            let trimmed = trimmingSpaces(s)
            guard !trimmed.isEmpty, trimmed.utf8.count <= 10, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let i = Int(trimmed), i <= Int(Int32.max)
            else { return nil }
            return i
        default: return nil
        }
    }

    /// The text without leading and trailing ASCII spaces and tabs.
    private static func trimmingSpaces(_ s: String) -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = s.firstIndex(where: { !isSpace($0) }), let last = s.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return s[first...last]
    }

    public var description: String {
        var parts = ["tokenType: \(tokenType)"]
        if let expiresIn { parts.append("expiresIn: \(expiresIn)") }
        parts.append("refreshToken: \(refreshToken == nil ? "none" : "present")")
        parts.append("idToken: \(idToken == nil ? "none" : "present")")
        if let scope { parts.append("scope: \(scope)") }
        if let expiresInProblem { parts.append("expiresInProblem: \(expiresInProblem)") }
        return "TokenResponse(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType, "expiresIn": expiresIn as Any, "scope": scope as Any],
               displayStyle: .struct)
    }
}
