#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// What the agent holds for one provider after a login: the credentials it
/// attaches for the host and what it needs to renew them.
///
/// `generation` increases on every write (login or refresh) so that code which
/// read a session, released the lock and came back can tell whether someone else
/// replaced it meanwhile, without comparing tokens. `description`, `debugDescription`
/// and the mirror show no token, so a session can be logged or dumped safely.
public struct Session: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var accessToken: String
    public var tokenType: String
    public var refreshToken: String?
    public var expiresAt: Date?
    public var idToken: String?
    /// Whatever the provider says about the user (a login response's user object, userinfo claims).
    public var user: JSONValue?
    public var obtainedAt: Date
    public var generation: Int
    /// The account this session is (`AccountIdentity`); nil in a record written
    /// before accounts existed, until it is read as an account.
    public var account: String?
    /// Access tokens for other shapes (scopes, audience, resource), obtained with
    /// this session's refresh token: part of the session, so they are stored,
    /// shared with other agents and numbered with it.
    public var shaped: [ShapedToken]
    /// The DPoP key the tokens are bound to (RFC 9449), made at login for a
    /// `dpop` provider: a secret kept with the refresh token (the keyring item,
    /// or the 0600 file), which the server wants to see proven on every refresh.
    public var dpopKey: DPoPKey?
    /// The flow that logged this session in, recorded when its provider has several
    /// (a flow may have a client of its own, which must renew and revoke what it issued);
    /// nil: the provider's default flow.
    public var flow: Flow?
    /// Who issued this session (`ProviderConfig.sessionIssuer` at its login): a session is only ever
    /// used while its provider's configuration names that issuer (`issuerProblem`), so a provider
    /// pointed at another server never sends it the old server's tokens. Nil in records written
    /// before sessions recorded it, which keep working whatever the configuration names.
    public var issuer: String?
    /// For a derived flow's session (`tokenExchange`, `idJag`): the generation of the subject's session its token was
    /// made from. Another generation there (a refresh, a new login) makes this one's token stale.
    public var subjectGeneration: Int?

    public init(accessToken: String, tokenType: String = "Bearer", refreshToken: String? = nil, expiresAt: Date? = nil,
                idToken: String? = nil, user: JSONValue? = nil, obtainedAt: Date, generation: Int = 0,
                account: String? = nil, shaped: [ShapedToken] = [], dpopKey: DPoPKey? = nil) {
        self.account = account
        self.dpopKey = dpopKey
        self.shaped = shaped
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.idToken = idToken
        self.user = user
        self.obtainedAt = obtainedAt
        self.generation = generation
    }

    /// The record as stored: camelCase keys, dates as RFC 3339 strings (whole
    /// seconds, so sub-second parts do not survive a round trip), absent optionals
    /// omitted.
    public func toJSON() -> JSONValue {
        var o = JSONObject()
        o["accessToken"] = .string(accessToken)
        o["tokenType"] = .string(tokenType)
        if let refreshToken { o["refreshToken"] = .string(refreshToken) }
        if let expiresAt { o["expiresAt"] = .string(RFC3339.format(expiresAt)) }
        if let idToken { o["idToken"] = .string(idToken) }
        if let user { o["user"] = user }
        o["obtainedAt"] = .string(RFC3339.format(obtainedAt))
        o["generation"] = .int(Int64(generation))
        if let account { o["account"] = .string(account) }
        if !shaped.isEmpty { o["shaped"] = .array(shaped.map { $0.toJSON() }) }
        if let dpopKey { o["dpopKey"] = .string(dpopKey.storedForm) }
        if let flow { o["flow"] = .string(flow.rawValue) }
        if let issuer { o["issuer"] = .string(issuer) }
        if let subjectGeneration { o["subjectGeneration"] = .int(Int64(subjectGeneration)) }
        return .object(o)
    }

    /// Reads a record written by `toJSON()`. Optional members may be absent or
    /// `null` (`user: null` is kept as `.null`); unknown members are ignored so an
    /// older agent can read a newer record. Errors name the member, never its value.
    public init(json: JSONValue) throws(SessionFormatError) {
        guard let o = json.objectValue else { throw SessionFormatError("the session is \(json.kindName), not an object") }
        (accessToken, tokenType, expiresAt, obtainedAt) = try Session.accessToken(in: o)
        refreshToken = try Session.optionalString(o, "refreshToken")
        idToken = try Session.optionalString(o, "idToken")
        guard let value = o["generation"] else { throw SessionFormatError("\"generation\" is missing") }
        guard case .int(let g) = value, g >= 0, g <= Int64(Int.max) else {
            throw SessionFormatError("\"generation\" is not a non-negative integer")
        }
        generation = Int(g)
        user = o["user"]
        account = try Session.optionalString(o, "account")
        dpopKey = try Session.optionalString(o, "dpopKey").map { (text) throws(SessionFormatError) in
            guard let key = DPoPKey(storedForm: text) else { throw SessionFormatError("\"dpopKey\" is not a P-256 private key") }
            return key
        }
        flow = try Session.optionalString(o, "flow").flatMap(Flow.init(rawValue:))  // one this agent does not know: the default
        issuer = try Session.optionalString(o, "issuer")
        if case .int(let g)? = o["subjectGeneration"], g >= 0, g <= Int64(Int.max) { subjectGeneration = Int(g) }
        shaped = []
        if let list = o["shaped"], !list.isNull {
            guard case .array(let items) = list else { throw SessionFormatError("\"shaped\" is \(list.kindName), not an array") }
            var tokens: [ShapedToken] = []
            for (i, item) in items.enumerated() {
                do throws(SessionFormatError) { tokens.append(try ShapedToken(json: item)) } catch {
                    throw SessionFormatError("\"shaped[\(i)]\": \(error.problem)")
                }
            }
            shaped = tokens
        }
    }

    /// The issuer that issued this session when `config` no longer names it — neither as its
    /// issuer nor as its token or login endpoint (the session of a provider configured by
    /// endpoints records one of those) — else nil.
    func issuerProblem(_ config: ProviderConfig) -> String? {
        guard let issuer else { return nil }
        let names = [config.learned?.issuer, config.issuer, config.tokenEndpoint, config.loginEndpoint]
        return names.contains(issuer) ? nil : issuer
    }

    /// The token cached for `shape`, if any.
    public func token(for shape: TokenShape) -> ShapedToken? { shaped.first { $0.shape == shape } }

    /// How many shaped tokens a session keeps. They are stored inside the account's
    /// record, which a reader refuses past 1 MiB: without a cap, a host asking for
    /// many audiences would grow it until the account was logged out.
    static let shapedLimit = 32

    /// This session with `token` in place of any earlier one of its shape, last in
    /// the list, without the tokens expired at `token.obtainedAt`, and, past
    /// `shapedLimit`, without the least recently obtained (a shape in use is
    /// obtained again as it expires, so it moves back to the end).
    func replacing(_ token: ShapedToken) -> Session {
        var copy = pruningShapes(at: token.obtainedAt)
        copy.shaped.removeAll { $0.shape == token.shape }
        copy.shaped.append(token)
        copy.shaped.removeFirst(max(0, copy.shaped.count - Self.shapedLimit))
        return copy
    }

    /// This session without the shaped tokens expired at `now` (they would only be obtained again).
    func pruningShapes(at now: Date) -> Session {
        var copy = self
        copy.shaped.removeAll { $0.expiresAt.map { $0 <= now } ?? false }
        return copy
    }

    /// An access token's members, checked the same way in a session and in a shaped token.
    static func accessToken(in o: JSONObject) throws(SessionFormatError) -> (String, String, Date?, Date) {
        let accessToken = try requiredString(o, "accessToken")
        guard !accessToken.isEmpty else { throw SessionFormatError("\"accessToken\" is empty") }
        let tokenType = try requiredString(o, "tokenType")
        // Both go into the `Authorization` header: a record that would inject header lines is corrupt.
        for (key, value) in [("accessToken", accessToken), ("tokenType", tokenType)] where !AuthorizationToken.isValid(value) {
            throw SessionFormatError("\"\(key)\" contains \(AuthorizationToken.rule)")
        }
        let expiresAt = try optionalString(o, "expiresAt").map { (text) throws(SessionFormatError) in
            guard let date = RFC3339.parse(text) else { throw SessionFormatError("\"expiresAt\" is not an RFC 3339 date") }
            return date
        }
        guard let obtainedAt = RFC3339.parse(try requiredString(o, "obtainedAt")) else {
            throw SessionFormatError("\"obtainedAt\" is not an RFC 3339 date")
        }
        return (accessToken, tokenType, expiresAt, obtainedAt)
    }

    static func requiredString(_ o: JSONObject, _ key: String) throws(SessionFormatError) -> String {
        guard let value = o[key] else { throw SessionFormatError("\"\(key)\" is missing") }
        guard let s = value.stringValue else { throw SessionFormatError("\"\(key)\" is \(value.kindName), not a string") }
        return s
    }

    static func optionalString(_ o: JSONObject, _ key: String) throws(SessionFormatError) -> String? {
        guard let value = o[key], !value.isNull else { return nil }
        guard let s = value.stringValue else { throw SessionFormatError("\"\(key)\" is \(value.kindName), not a string") }
        return s
    }

    public var description: String {
        var parts = ["tokenType: \(tokenType)", "generation: \(generation)", "obtainedAt: \(RFC3339.format(obtainedAt))"]
        if let expiresAt { parts.append("expiresAt: \(RFC3339.format(expiresAt))") }
        parts.append("refreshToken: \(refreshToken == nil ? "none" : "present")")
        parts.append("idToken: \(idToken == nil ? "none" : "present")")
        if let account { parts.append("account: \(account)") }
        if !shaped.isEmpty { parts.append("shaped: \(shaped.count)") }
        if let dpopKey { parts.append("dpopKey: \(dpopKey.thumbprint)") }
        return "Session(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType, "expiresAt": expiresAt as Any, "obtainedAt": obtainedAt,
                                "generation": generation, "hasRefreshToken": refreshToken != nil],
               displayStyle: .struct)
    }
}
