#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// A JSON login API (`POST /sessions {"session": {...}}` → `{"jwt": ...}`), the
/// kind many apps have instead of OAuth. The body template's `{{username}}` and
/// `{{password}}` are filled in; token and user are read by JSON Pointer.
struct SessionAPIProvider: LoginProvider {
    static let descriptor = FlowDescriptor(
        keys: ["loginEndpoint", "loginBody", "tokenPointer", "userPointer", "refreshEndpoint", "logoutEndpoint"],
        required: ["loginEndpoint", "loginBody", "tokenPointer"], discoverable: nil, fields: [.username, .password],
        canRefresh: { config, _ in config.refreshEndpoint != nil },
        makeProvider: { SessionAPIProvider(config: $0.config, http: $0.http, clock: $0.clock, revokeTimeout: $0.revokeTimeout) })

    let config: ProviderConfig
    let http: HTTPCalls
    let clock: Clock
    let revokeTimeout: Double

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard case .password(let username, let password)? = credentials else {
            throw AuthError.needsUsernameAndPassword(config)
        }
        guard let endpoint = config.loginEndpoint else {
            throw AuthError.noLoginEndpoint(config)
        }
        let body = Self.fill(config.loginBody ?? [:], username: username, password: password)
        let response: HTTPResponse
        do {
            response = try await http.postJSON(endpoint, body)
        } catch {
            switch error { case .transient(let why): throw unavailable(why) }
        }
        switch response.status {
        case 200..<300: break
        case 400, 401, 403, 404, 422:
            throw AuthError.invalidCredentials(config, .passwordRejected)
        default:
            throw unavailable("the login endpoint answered HTTP \(response.status)")
        }
        let found: Session?
        do {
            found = try session(from: response, previous: nil, username: username)
        } catch {
            throw AuthError.malformedResponse(config, "the login response's \(error.problem)")
        }
        guard let session = found else {
            throw unavailable("the login response has no token at \(config.tokenPointer?.description ?? "?")")
        }
        // Signing with it would only earn a 401: refuse now, while the user is here to read why.
        if let expiresAt = session.expiresAt, expiresAt <= clock.now() {
            throw AuthError.malformedResponse(config, "its token expired at \(RFC3339.format(expiresAt)), before the login ended (is the system clock right?)")
        }
        return session
    }

    /// A JSON login API has no notion of scopes or resources: only the session's own token.
    func refresh(_ session: Session, shape: TokenShape) async -> RefreshOutcome {
        guard shape.isNone, let endpoint = config.refreshEndpoint else { return .unsupported }
        let response: HTTPResponse
        do {
            response = try await http.postJSON(endpoint, [:], headers: Credential.headers(authorization: session.authorization, proof: nil))
        } catch {
            switch error { case .transient(let why): return .transient(why) }
        }
        switch response.status {
        case 200..<300:
            do {
                guard let next = try self.session(from: response, previous: session, username: nil) else {
                    return .transient("the refresh response has no token")
                }
                return .refreshed(next)
            } catch {
                return .malformed("the refresh response's \(error.problem)")
            }
        case 400, 401, 403: return .rejected(ServerRefusal(error: "HTTP \(response.status)", description: nil))
        default: return .transient("the refresh endpoint answered HTTP \(response.status)")
        }
    }

    func revoke(_ session: Session) async -> Bool {
        guard let endpoint = config.logoutEndpoint,
              let response = try? await http.postJSON(endpoint, [:], headers: Credential.headers(authorization: session.authorization, proof: nil), timeout: revokeTimeout)
        else { return false }
        return (200..<300).contains(response.status)
    }

    private func unavailable(_ why: String) -> AuthError { AuthError.unavailable(config, why) }

    /// The session a login or refresh response describes; `nil` when it has no
    /// token at `tokenPointer`. Throws when the token cannot go in a header.
    private func session(from response: HTTPResponse, previous: Session?, username: String?) throws(TokenResponse.Malformed) -> Session? {
        guard let document = try? JSONParser.parse(response.body),
              let token = config.tokenPointer?.resolve(in: document)?.stringValue, !token.isEmpty
        else { return nil }
        guard AuthorizationToken.isValid(token) else { throw TokenResponse.Malformed(problem: "token contains \(AuthorizationToken.rule)") }
        var user = previous?.user ?? (username.map { ["username": .string($0)] } ?? [:])
        if let found = config.userPointer?.resolve(in: document), found != .null {
            user = found.objectValue != nil ? found : ["id": found]
        }
        let now = clock.now()
        return Session(accessToken: token, tokenType: "Bearer", refreshToken: nil, expiresAt: JWT.expiry(of: token),
                       idToken: nil, user: user, obtainedAt: now, generation: 0)
    }

    /// Replaces `{{username}}` and `{{password}}` inside every string of the template.
    static func fill(_ template: JSONValue, username: String, password: String) -> JSONValue {
        switch template {
        case .string(let s):
            return .string(s.replacing("{{username}}", with: username).replacing("{{password}}", with: password))
        case .array(let items):
            return .array(items.map { fill($0, username: username, password: password) })
        case .object(let o):
            var out = JSONObject()
            for (k, v) in o.members { out.appendUnchecked(k, fill(v, username: username, password: password)) }
            return .object(out)
        default:
            return template
        }
    }
}
