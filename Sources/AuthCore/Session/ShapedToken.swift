#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// An access token for one `TokenShape`, kept inside its account's session.
/// Like `Session`, its descriptions never show the token.
public struct ShapedToken: Sendable, Equatable, CustomStringConvertible, TokenLifetime {
    public let shape: TokenShape
    public var accessToken: String
    public var tokenType: String
    public var expiresAt: Date?
    public var obtainedAt: Date

    public init(shape: TokenShape, accessToken: String, tokenType: String, expiresAt: Date?, obtainedAt: Date) {
        self.shape = shape
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.obtainedAt = obtainedAt
    }

    /// The `Authorization` header value.
    public var authorization: String { Credential.authorization(tokenType: tokenType, accessToken: accessToken) }

    func toJSON() -> JSONValue {
        var o = JSONObject()
        if !shape.scopes.isEmpty { o["scopes"] = .array(shape.scopes.map { .string($0) }) }
        if let audience = shape.audience { o["audience"] = .string(audience) }
        if let resource = shape.resource { o["resource"] = .string(resource) }
        o["accessToken"] = .string(accessToken)
        o["tokenType"] = .string(tokenType)
        if let expiresAt { o["expiresAt"] = .string(RFC3339.format(expiresAt)) }
        o["obtainedAt"] = .string(RFC3339.format(obtainedAt))
        return .object(o)
    }

    init(json: JSONValue) throws(SessionFormatError) {
        guard let o = json.objectValue else { throw SessionFormatError("not an object") }
        var scopes: [String] = []
        if let list = o["scopes"] {
            guard case .array(let items) = list, let names = Optional(items.compactMap(\.stringValue)), names.count == items.count else {
                throw SessionFormatError("\"scopes\" is not an array of strings")
            }
            scopes = names
        }
        shape = TokenShape(scopes: scopes, audience: try Session.optionalString(o, "audience"), resource: try Session.optionalString(o, "resource"))
        (accessToken, tokenType, expiresAt, obtainedAt) = try Session.accessToken(in: o)
    }

    public var description: String {
        "ShapedToken(\(shape), tokenType: \(tokenType), expiresAt: \(expiresAt.map(RFC3339.format) ?? "none"))"
    }
}
