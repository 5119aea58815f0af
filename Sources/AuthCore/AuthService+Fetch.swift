#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import ES256
import Wire

/// `fetch`, the operation: route, sign, and send each hop through the one `Exchange` — one refresh
/// and resend after a 401 for the token that was sent, learning an API that describes itself, a
/// step-up after `403 insufficient_scope`, one nonce retry per proof. Its values and rules
/// (`FetchRequest`, `FetchResponse`, redirects) are in `HTTP/FetchRequest.swift`.
extension AuthService {
    /// What signs a `fetch`: the token, and the account session and shape it came from — which a
    /// refresh after a 401 renews, and which names the token the server rejected.
    struct FetchSigner {
        let provider: ProviderAccounts
        let session: AccountSession
        let shape: TokenShape
        let credential: Credential
    }

    /// `fetch`: the request, signed when a provider covers it, with one refresh and
    /// one resend after a 401 for the token that was sent.
    public func fetch(_ request: FetchRequest, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                      login: FetchLogin = .hint, context: LoginContext = LoginContext()) async throws(AuthError) -> FetchResponse {
        let route = try router.route(url: request.url, provider: provider)
        guard route != nil || door.reachesTheNetwork else { throw AuthError.uncoveredFetch(request.url) }
        var signer: FetchSigner?
        var loggedInFirst = false
        if let route {
            do {
                signer = try await fetchSigner(route, account: account, shape: shape)
            } catch where login == .ifNeeded && route.accounts.config.learned != nil && (error.code == .notLoggedIn || error.code == .sessionExpired) {
                // A learned API nobody is logged in to (any more): the login `ifNeeded` asks for, then the request.
                let result = try await learn(url: request.url, context: context)
                signer = try await fetchSigner(request.url, provider: result.provider, account: AccountChoice(account: result.account), shape: shape)
                loggedInFirst = true
            }
        }
        var state = ExchangeState()
        var (method, url, body) = (request.method, request.url, request.body)
        var sends = 0
        while true {
            let outcome: Exchange<FetchSigner, HTTPResponse>.Outcome
            do {
                outcome = try await fetchExchange(request, method: method, url: url, body: body, provider: provider, account: account,
                                                  shape: shape, login: login, context: context).run(signer, state: &state)
            } catch let error as AuthError {
                throw error
            } catch let error as HTTPTransportError {
                throw Self.fetchError(error, url: url, limit: request.maxResponseBytes)
            } catch let error as P256Key.Unavailable {
                throw AuthError.requestFailed(.notSent(error.description))
            } catch {
                throw AuthError.requestFailed(.notCompleted(HTTPCalls.describe(error, url: url)))
            }
            signer = outcome.signed
            sends += 1
            let response = outcome.answer
            let learned = signer?.provider.config.learned
            // A learned provider's token follows a redirect only while it stays under its resource.
            if let next = RedirectRule.next(status: response.status, location: response.headers["location"], from: url, method: method),
               signer == nil || learned?.covers(next.url) != false {
                guard sends <= FetchRequest.maxRedirects else { throw AuthError.requestFailed(.tooManyRedirects) }
                (method, url) = (next.method, next.url)
                if !next.keepsBody { body = nil }
                state.nonceRetried = false  // a proof of its own for each hop
                continue
            }
            var answer = FetchResponse(status: response.status, headers: response.headers, body: response.body, provider: signer?.provider.id,
                                       signed: signer != nil, retried: loggedInFirst || state.refreshed || state.loggedIn || state.stepUps > 0)
            switch outcome.unanswered {
            case .logIn(let challenge?) where provider == nil && signer == nil:
                answer.login = await loginHint(for: request.url, challenge: challenge)
            case .stepUp(let scopes):
                if let learned, let config = signer?.provider.config, let asked = Self.scopeChallenge(config, asked: scopes) {
                    answer.login = LoginHint(resource: learned.resource, authorizationServer: learned.issuer, scopes: asked.scopes)
                }
            default: break
            }
            return answer
        }
    }

    /// The signer of a request to `url`: nil when no provider covers it.
    private func fetchSigner(_ url: String, provider: String?, account: AccountChoice, shape: TokenShape?) async throws(AuthError) -> FetchSigner? {
        guard let route = try router.route(url: url, provider: provider) else { return nil }
        return try await fetchSigner(route, account: account, shape: shape)
    }

    private func fetchSigner(_ route: Route, account: AccountChoice, shape: TokenShape?) async throws(AuthError) -> FetchSigner {
        let c = try await resolveObtaining(route.accounts, account)
        let shape = shape ?? route.shape
        return FetchSigner(provider: route.accounts, session: c, shape: shape, credential: try await usableCredential(c, shape))
    }

    /// One hop's exchange: signed by the signer's credential (with a fresh DPoP proof for each
    /// attempt when the token is bound); a rejected token renewed under the `refresh` rule; an
    /// uncovered API that describes itself learned when `login` asks (or `learnAllow` allows); a
    /// learned API's step-up when `login` asks.
    private func fetchExchange(_ request: FetchRequest, method: String, url: String, body: [UInt8]?, provider: String?, account: AccountChoice,
                               shape: TokenShape?, login: FetchLogin, context: LoginContext) -> Exchange<FetchSigner, HTTPResponse> {
        Exchange(
            carries: { signer in signer.map { ServerChallenge.Request($0.credential) } ?? .unsigned },
            sign: { [clock, nonces] signer in try signer?.credential.authorize(method: method, url: url, clock: clock, nonces: nonces) ?? [] },
            send: { [transport] authorization in
                let headers = authorization.isEmpty ? request.headers : request.headers.filter { !["authorization", "dpop"].contains($0.0.lowercased()) }
                return try await transport.send(HTTPRequest(method: method, url: url, headers: headers + authorization, body: body, timeout: request.timeout,
                                                            maxResponseBytes: request.maxResponseBytes, lane: .resource))
            },
            head: { $0 },
            keepNonce: { [nonces] nonce in nonces.keep(nonce, for: url) },
            refresh: { [self] rejected in try await renewed(rejected, url: request.url, login: login, shape: shape, context: context) },
            logIn: { [self] challenge in
                // An API that describes itself: learn it when asked (or allowed); else the answer says how.
                guard provider == nil, let challenge, login == .ifNeeded || config.learnAllow.allows(request.url) else { return nil }
                let learned = try await learn(url: request.url, challenge: challenge, context: context)
                return try await fetchSigner(request.url, provider: learned.provider, account: AccountChoice(account: learned.account), shape: shape)
            },
            stepUp: { [self] scopes, rejected in
                // Step-up (MCP 2025-11-25): the learned resource wants more scopes than the session has.
                guard login == .ifNeeded, let asked = Self.scopeChallenge(rejected.provider.config, asked: scopes), !asked.asksNothingNew else { return nil }
                _ = try await stepUp(asked, context: context)
                return try await fetchSigner(request.url, provider: rejected.provider.id, account: account, shape: shape)
            })
    }

    /// The signer to resend with after the server rejected `rejected`'s token (the `refresh` rule).
    /// When the refresh was refused and the session ended (here, or first in another process), a learned API's `login: "ifNeeded"` logs
    /// in at once (one prompt, not an error and then a hang) and the request goes on with that login.
    private func renewed(_ rejected: FetchSigner, url: String, login: FetchLogin, shape: TokenShape?,
                         context: LoginContext) async throws(AuthError) -> FetchSigner? {
        do {
            let (renewed, _) = try await credentialAfterRejection(rejected.session, rejected.shape, rejected: rejected.credential.issue)
            return FetchSigner(provider: rejected.provider, session: rejected.session, shape: rejected.shape, credential: renewed)
        } catch where login == .ifNeeded && rejected.provider.config.learned != nil && (error.code == .sessionExpired || error.code == .notLoggedIn) {
            // Another process that met the same refusal may have logged in already: its session, not a second login.
            checkStore()
            if let theirs = try? await fetchSigner(url, provider: rejected.provider.id, account: AccountChoice(), shape: shape),
               theirs.credential.issue != rejected.credential.issue {
                return theirs
            }
            let result = try await learn(url: url, context: context)
            return try await fetchSigner(url, provider: result.provider, account: AccountChoice(account: result.account), shape: shape)
        }
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
