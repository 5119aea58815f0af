@testable import AuthCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import Locking
import TestSupport
import Wire

/// An identity provider the agent cannot reach from here (Entra ID, Google, GitHub…), reproduced from
/// its documentation in process (a `FakeOAuthServer` handler): where its metadata is and which
/// issuer it names, what its token endpoint refuses and how, when it issues refresh tokens. The
/// pages each habit comes from are cited in `ProviderProfileFlowTests`, where each fake is made.
/// `browser` plays the person's browser: it reads the authorization URL, and comes back to the
/// agent's loopback redirect with a code, as the provider would after the person signed in.
final class IdentityProviderFake: Sendable {
    struct Habits: Sendable {
        /// Where the metadata document is served (a path), and the issuer it names.
        var metadataPath: String?
        var metadataIssuer: String?
        var metadata: JSONObject = [:]
        var tokenPath = "/token"
        var devicePath: String?
        var revokePath: String?
        /// The client must send this secret (in Basic or in the body), public client or not.
        var secret: String?
        /// The answer to any request carrying `resource` (Entra: AADSTS9010010); nil: `resource` is taken.
        var refusesResource: (status: Int, body: String)?
        /// Whether the authorization request (or the device request) asks enough to get a refresh token.
        var refreshTokenFor: @Sendable (_ request: [String: String]) -> Bool = { _ in true }
        /// A new refresh token with every refresh (the old one spent).
        var rotates = false
        /// The access token's lifetime; nil: never expires (GitHub OAuth apps).
        var expiresIn: Int? = 3600
        /// Answers form-encoded unless the request accepts JSON, and refusals with 200 (GitHub).
        var githubAnswers = false
        /// Who signed in, at `userPath` (the provider's userinfo or user API).
        var userPath: String?
        var user: JSONObject = ["sub": "alice", "name": "Alice"]
        /// The refusal of a refresh token the server wants replaced by a new login (Google's invalid_rapt).
        var refreshRefusal: String?
        /// Keycloak's `refresh_expires_in` for what the login asked (0 for an offline token); nil: not sent.
        var refreshExpiresIn: @Sendable (_ request: [String: String]) -> Int? = { _ in nil }
    }

    let habits: Habits
    let server: FakeOAuthServer
    private let state = Locked(State())

    private struct State {
        var codes: [String: [String: String]] = [:]
        var refreshTokens: [String: [String: String]] = [:]
        var issued = 0
        var devicePolls = 0
        /// What the device authorization request asked: the device grant's tokens are for it.
        var deviceRequest: [String: String] = [:]
        var refusingRefreshes = false
    }

    init(_ habits: Habits) {
        self.habits = habits
        let state = self.state
        server = FakeOAuthServer { request in try Self.answer(request, habits, state) }
    }

    /// From now on, refreshes are refused as `habits.refreshRefusal` says.
    func refuseRefreshes() { state.withLock { $0.refusingRefreshes = true } }

    /// The form bodies sent to the token endpoint, in order.
    var tokenRequests: [[String: String]] {
        server.requests.filter { URL(string: $0.url)?.path == habits.tokenPath }.map { FormEncoding.uniqueParameters($0.body ?? []) ?? [:] }
    }

    func count(_ path: String) -> Int { server.count(path) }

    // MARK: The person's browser

    /// Signs the person in at the authorization URL the agent showed and returns to its redirect with a code.
    func browser(_ url: String) async throws {
        let query = FormEncoding.uniqueParameters(Array((URLComponents(string: url)?.percentEncodedQuery ?? "").utf8)) ?? [:]
        let code = "code-\(UUID().uuidString.prefix(8))"
        state.withLock { $0.codes[code] = query }
        guard let redirect = query["redirect_uri"], let state = query["state"] else { return }
        var back = URLComponents(string: redirect)!
        back.queryItems = [URLQueryItem(name: "code", value: code), URLQueryItem(name: "state", value: state)]
        _ = try await URLSession.shared.data(from: back.url!)
    }

    /// A login context whose browser is `browser` and whose device page the person approves at once.
    var person: LoginContext {
        LoginContext(prompt: { [self] prompt, _ in
            if case .browser(let url, _) = prompt { Task { try? await self.browser(url) } }
        })
    }

    // MARK: The server

    private static func json(_ status: Int, _ value: JSONObject, _ habits: Habits, _ request: HTTPRequest) -> HTTPResponse {
        if habits.githubAnswers, request.header("Accept")?.contains("application/json") != true {
            let pairs = value.members.map { ($0.0, $0.1.stringValue ?? $0.1.intValue.map { String($0) } ?? "") }
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/x-www-form-urlencoded"], body: FormEncoding.encode(pairs))
        }
        return FakeOAuthServer.json(habits.githubAnswers && status == 400 ? 200 : status, .object(value))
    }

    private static func answer(_ request: HTTPRequest, _ habits: Habits, _ state: Locked<State>) throws -> HTTPResponse {
        let path = URL(string: request.url)?.path ?? ""
        if path == habits.metadataPath {
            var document = habits.metadata
            document["issuer"] = habits.metadataIssuer.map(JSONValue.string)
            return FakeOAuthServer.json(200, .object(document))
        }
        let form = FormEncoding.uniqueParameters(request.body ?? []) ?? [:]
        if path == habits.revokePath { return HTTPResponse(status: 200) }
        if path == habits.userPath { return FakeOAuthServer.json(200, .object(habits.user)) }
        if form["resource"] != nil, let refusal = habits.refusesResource {
            return HTTPResponse(status: refusal.status, headers: ["Content-Type": "application/json"], body: Array(refusal.body.utf8))
        }
        if let secret = habits.secret, [habits.tokenPath, habits.devicePath].contains(path) {
            let basic = request.header("Authorization").flatMap { Data(base64Encoded: String($0.dropFirst("Basic ".count))) }
                .map { String(decoding: $0, as: UTF8.self).hasSuffix(":\(secret)") } ?? false
            if !basic, form["client_secret"] != secret {
                return json(400, ["error": "invalid_request", "error_description": "client_secret is missing."], habits, request)
            }
        }
        if path == habits.devicePath {
            state.withLock { $0.deviceRequest = form }
            return json(200, ["device_code": "dc", "user_code": "WDJB-MJHT", "verification_uri": "https://example.com/device", "expires_in": 900,
                              "interval": 1, "scope": .string(form["scope"] ?? "")], habits, request)
        }
        guard path == habits.tokenPath else { return HTTPResponse(status: 404) }
        return state.withLock { state -> HTTPResponse in
            let grantRequest: [String: String]
            switch form["grant_type"] {
            case "authorization_code":
                guard let code = form["code"], let authorization = state.codes.removeValue(forKey: code), form["code_verifier"] != nil else {
                    return json(400, ["error": "invalid_grant"], habits, request)
                }
                grantRequest = authorization
            case "urn:ietf:params:oauth:grant-type:device_code":
                state.devicePolls += 1
                if state.devicePolls == 1 { return json(400, ["error": "authorization_pending"], habits, request) }
                grantRequest = state.deviceRequest
            case "refresh_token":
                guard let token = form["refresh_token"], let granted = state.refreshTokens[token] else { return json(400, ["error": "invalid_grant"], habits, request) }
                if state.refusingRefreshes, let refusal = habits.refreshRefusal {
                    return HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Array(refusal.utf8))
                }
                if habits.rotates { state.refreshTokens[token] = nil }
                grantRequest = granted
            default:
                return json(400, ["error": "unsupported_grant_type"], habits, request)
            }
            state.issued += 1
            var answer: JSONObject = ["access_token": .string("at-\(state.issued)"), "token_type": "bearer",
                                      "scope": .string(form["scope"] ?? grantRequest["scope"] ?? "")]
            if let expiresIn = habits.expiresIn { answer["expires_in"] = .int(Int64(expiresIn)) }
            if let refreshExpiresIn = habits.refreshExpiresIn(grantRequest) { answer["refresh_expires_in"] = .int(Int64(refreshExpiresIn)) }
            let refreshing = form["grant_type"] == "refresh_token"
            if habits.refreshTokenFor(grantRequest), !refreshing || habits.rotates {
                let token = "rt-\(state.issued)"
                state.refreshTokens[token] = grantRequest
                answer["refresh_token"] = .string(token)
            }
            return json(200, answer, habits, request)
        }
    }
}
