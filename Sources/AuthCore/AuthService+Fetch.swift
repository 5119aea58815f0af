#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import ES256
import Wire

/// `fetch`, the operation: route, sign, send, and read the server's answer (`ServerChallenge`) —
/// one refresh and resend after a 401 for the token that was sent, learning an API that
/// describes itself, a step-up after `403 insufficient_scope`. Its values and rules
/// (`FetchRequest`, `FetchResponse`, redirects) are in `HTTP/FetchRequest.swift`.
extension AuthService {
    /// `fetch`: the request, signed when a provider covers it, with one refresh and
    /// one resend after a 401 for the token that was sent.
    public func fetch(_ request: FetchRequest, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                      login: FetchLogin = .hint, context: LoginContext = LoginContext()) async throws(AuthError) -> FetchResponse {
        guard let route = try router.route(url: request.url, provider: provider) else {
            guard door.reachesTheNetwork else {
                throw AuthError.uncoveredFetch(request.url)
            }
            let response = try await exchange(request, credential: nil, learned: nil)
            var answer = FetchResponse(status: response.status, headers: response.headers, body: response.body, provider: nil, signed: false, retried: false)
            // An API that describes itself: learn it when asked (or allowed), else say how.
            guard provider == nil, case .discover(let challenge?) = ServerChallenge.read(response, to: .unsigned) else { return answer }
            if login == .ifNeeded || config.learnAllow.allows(request.url) {
                let learned = try await learn(url: request.url, challenge: challenge, context: context)
                var again = try await fetch(request, provider: learned.provider, account: AccountChoice(account: learned.account), shape: shape, login: .hint, context: context)
                again.retried = true
                return again
            }
            answer.login = await loginHint(for: request.url, challenge: challenge)
            return answer
        }
        let (p, originShape) = (route.accounts, route.shape)
        let c: AccountSession
        let credential: Credential
        let shape = shape ?? originShape
        do {
            c = try resolve(p, account)
            credential = try await usableCredential(c, shape)
        } catch where login == .ifNeeded && p.config.learned != nil && (error.code == .notLoggedIn || error.code == .sessionExpired) {
            // A learned API nobody is logged in to (any more): the login `ifNeeded` asks for, then the request.
            let result = try await learn(url: request.url, context: context)
            var again = try await fetch(request, provider: p.id, account: AccountChoice(account: result.account), shape: shape, login: .hint, context: context)
            again.retried = true
            return again
        }
        var response = try await exchange(request, credential: credential, learned: p.config.learned)
        var retried = false
        // A refused DPoP proof is not a dead token: it comes back as is, and no refresh is spent on it.
        if ServerChallenge.read(response, to: .init(credential)) == .refresh {
            let (renewed, _) = try await credentialAfterRejection(c, shape, rejected: credential.issue)
            response = try await exchange(request, credential: renewed, learned: p.config.learned)
            retried = true
        }
        var answer = FetchResponse(status: response.status, headers: response.headers, body: response.body, provider: p.id, signed: true, retried: retried)
        // Step-up (MCP 2025-11-25): the learned resource wants more scopes than the session has.
        if let learned = p.config.learned, case .insufficientScope(let scopes) = ServerChallenge.read(response, to: .init(credential)),
           let asked = Self.scopeChallenge(p.config, asked: scopes) {
            guard login == .ifNeeded, !asked.asksNothingNew else {
                answer.login = LoginHint(resource: learned.resource, authorizationServer: learned.issuer, scopes: asked.scopes)
                return answer
            }
            _ = try await stepUp(asked, context: context)
            var again = try await fetch(request, provider: p.id, account: account, shape: shape, login: .hint, context: context)
            again.retried = true
            return again
        }
        return answer
    }

    /// Sends `request` (authorized by `credential` when given, with a fresh DPoP proof
    /// for every hop when the token is bound), following same-origin redirects.
    /// A learned provider's token follows a redirect only while it stays under its resource.
    private func exchange(_ request: FetchRequest, credential: Credential?, learned: LearnedResource?) async throws(AuthError) -> HTTPResponse {
        var method = request.method
        var url = request.url
        var body = request.body
        for _ in 0...FetchRequest.maxRedirects {
            let replaced: Set<String> = credential == nil ? [] : ["authorization", "dpop"]
            let headers = request.headers.filter { !replaced.contains($0.0.lowercased()) }
            let response: HTTPResponse
            do {
                let (hopMethod, hopURL, hopBody) = (method, url, body)
                let send = { [transport] (authorization: [(String, String)]) async throws -> HTTPResponse in
                    try await transport.send(HTTPRequest(method: hopMethod, url: hopURL, headers: headers + authorization,
                                                         body: hopBody, timeout: request.timeout, maxResponseBytes: request.maxResponseBytes,
                                                         lane: .resource))
                }
                let authorize = { [clock, nonces] () throws -> [(String, String)] in
                    try credential?.authorize(method: hopMethod, url: hopURL, clock: clock, nonces: nonces) ?? []
                }
                if credential?.dpopKey != nil {
                    response = try await DPoPExchange.send(url: url, nonces: nonces, authorize: authorize, send)
                } else {
                    response = try await send(try authorize())
                }
            } catch let error as HTTPTransportError {
                throw Self.fetchError(error, url: url, limit: request.maxResponseBytes)
            } catch let error as P256Key.Unavailable {
                throw AuthError.requestFailed(.notSent(error.description))
            } catch {
                throw AuthError.requestFailed(.notCompleted(HTTPCalls.describe(error, url: url)))
            }
            guard let next = RedirectRule.next(status: response.status, location: response.headers["location"], from: url, method: method) else {
                return response
            }
            if credential != nil, let learned, !learned.covers(next.url) { return response }
            (method, url) = (next.method, next.url)
            if !next.keepsBody { body = nil }
        }
        throw AuthError.requestFailed(.tooManyRedirects)
    }

    static func fetchError(_ error: HTTPTransportError, url: String, limit: Int) -> AuthError {
        switch error {
        case .responseTooLarge: return AuthError.responseTooLarge(.body(limit: limit))
        case .headersTooLarge(let headerLimit): return AuthError.responseTooLarge(.headers(limit: headerLimit))
        case .invalidURL: return AuthError.requestFailed(.cannotBeSent("\(error)"))
        default: return AuthError.requestFailed(.notCompleted(HTTPCalls.describe(error, url: url)))
        }
    }
}
