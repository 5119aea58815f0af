import JSON

/// The useful part of a successful OAuth 2.0 token endpoint response (RFC 6749 §5.1).
///
/// Normalised on the way in: `token_type` defaults to `Bearer` and any casing of
/// "bearer" becomes `Bearer` (servers vary, the `Authorization` header wants one
/// spelling); `expires_in` is accepted as a number or a numeric string because
/// real servers send both. The description shows no token.
public struct TokenResponse: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessToken: String
    public var tokenType: String
    /// Seconds from receipt until the access token expires, when the server says.
    public var expiresIn: Int?
    public var refreshToken: String?
    public var idToken: String?
    public var scope: String?

    public init(accessToken: String, tokenType: String = "Bearer", expiresIn: Int? = nil, refreshToken: String? = nil,
                idToken: String? = nil, scope: String? = nil) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.scope = scope
    }

    /// Reads a token response object; `nil` when `access_token` is not a
    /// non-empty string of visible ASCII (RFC 6749 Appendix A.12), or when a
    /// token or the type holds characters that could split an HTTP header.
    public init?(json: JSONObject) {
        guard let token = json["access_token"]?.stringValue, TokenResponse.isTokenText(token) else { return nil }
        accessToken = token
        let type = json["token_type"]?.stringValue ?? "Bearer"
        guard type.isEmpty || TokenResponse.isTokenText(type) else { return nil }
        tokenType = type.lowercased() == "bearer" || type.isEmpty ? "Bearer" : type
        expiresIn = json["expires_in"].flatMap(TokenResponse.seconds)
        refreshToken = json["refresh_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        idToken = json["id_token"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        scope = json["scope"]?.stringValue
        for other in [refreshToken, idToken] {
            if let other, !TokenResponse.isTokenText(other) { return nil }
        }
    }

    /// Non-empty printable ASCII (`%x20-7E`): what RFC 6749 allows in tokens,
    /// and nothing that could end a header line.
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
        return "TokenResponse(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType, "expiresIn": expiresIn as Any, "scope": scope as Any],
               displayStyle: .struct)
    }
}
