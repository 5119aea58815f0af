#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import ES256
import Wire

/// `fetch`: the request adapter and the retrier of the practice this project
/// grew from, in one call — sign with the `sign` rules, send, and after a 401
/// for the token that was sent, refresh once (the `refresh` rule) and resend once.
public struct FetchRequest: Sendable {
    public var method: String
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]?
    /// Seconds for each exchange with the API (not for a refresh, which has its own timeout).
    public var timeout: Double
    public var maxResponseBytes: Int

    public static let defaultTimeout = 30.0
    /// One millisecond, the transport's resolution: a shorter timeout cannot be honoured.
    public static let minimumTimeout = 0.001
    public static let defaultMaxResponseBytes = 10 << 20
    /// Same-origin redirects followed before the last response is returned as is.
    static let maxRedirects = 5

    public init(method: String, url: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                timeout: Double = defaultTimeout, maxResponseBytes: Int = defaultMaxResponseBytes) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
    }
}

/// The checks on a host's header fields, shared by the RPC's `fetch` and `auth-agent fetch -H`.
extension FetchRequest {
    public enum HeaderRefusal: Sendable, Equatable {
        /// The name is not an RFC 9110 token.
        case notAToken
        /// The value contains CR, LF or NUL, which would end the header line.
        case unsafeValue
        /// A field that frames or routes the request (`reservedHeaderNames`, `Proxy-*`): the agent's
        /// HTTP client sets those. A host's `Host` on a signed request could route the token to
        /// another tenant of a shared ingress; `Transfer-Encoding` or `Content-Length` could
        /// smuggle a second request behind the first.
        case reserved
    }

    public static let reservedHeaderNames: Set<String> = ["host", "content-length", "transfer-encoding", "connection", "te", "upgrade"]
    /// Whether `method` can be a request's method: an RFC 9110 token, as the RPC's `fetch` and the
    /// command line's `-X` both require (a DPoP proof names it, a request line carries it).
    public static func isMethod(_ method: String) -> Bool { HTTPRequestChecks.isMethod(method) }

    public static func refusal(name: String, value: String) -> HeaderRefusal? {
        guard HTTPRequestChecks.isToken(name) else { return .notAToken }
        let lowered = name.lowercased()
        if reservedHeaderNames.contains(lowered) || lowered.hasPrefix("proxy-") { return .reserved }
        return HTTPRequestChecks.isHeaderSafe(value) ? nil : .unsafeValue
    }
}

public struct FetchResponse: Sendable, Equatable {
    public var status: Int
    /// Lowercased names; repeated fields joined with ", ".
    public var headers: [String: String]
    public var body: [UInt8]
    public var provider: String?
    public var signed: Bool
    /// Whether the request was sent again after a 401 and a refresh.
    public var retried: Bool
    /// Set when the API wants a login the agent did not run: an uncovered URL's `401` with a
    /// Bearer challenge, or a learned resource's `403 insufficient_scope` (step-up).
    public var login: LoginHint?

    /// The body as text when the content type is textual and the bytes are UTF-8; else nil (send base64).
    public var textBody: String? {
        guard Self.isTextual(contentType: headers["content-type"]) else { return nil }
        return String(validating: body, as: UTF8.self)
    }

    /// `text/*`, JSON, XML (including `+json`/`+xml` types), JavaScript and form bodies; no content type is not text.
    static func isTextual(contentType: String?) -> Bool {
        guard let contentType else { return false }
        // Not omitting empty pieces: an empty value, or one that starts with ';', still has a first piece.
        let type = HTTPText.trimmingWhitespace(contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)[0])
            .lowercased()
        if type.hasPrefix("text/") || type.hasSuffix("+json") || type.hasSuffix("+xml") { return true }
        return ["application/json", "application/xml", "application/javascript", "application/x-www-form-urlencoded"].contains(type)
    }
}

/// Where a redirect leads, if the agent follows it: only within the origin that
/// was authorized, so the `Authorization` header never travels to another origin.
enum RedirectRule {
    struct Next: Equatable {
        let method: String
        let url: String
        let keepsBody: Bool
    }

    static func next(status: Int, location: String?, from url: String, method: String) -> Next? {
        guard [301, 302, 303, 307, 308].contains(status), let location,
              let base = URL(string: url), let target = URL(string: location, relativeTo: base)?.absoluteURL,
              let from = Origin(url: url), let to = Origin(url: target.absoluteString), from == to else { return nil }
        // As browsers do: 303, and 301/302 after a POST, continue as a GET without the body.
        if status == 303 || ((status == 301 || status == 302) && method == "POST") {
            return Next(method: method == "HEAD" ? "HEAD" : "GET", url: target.absoluteString, keepsBody: false)
        }
        return Next(method: method, url: target.absoluteString, keepsBody: true)
    }
}

extension AuthService {
    /// `fetch`: the request, signed when a provider covers it, with one refresh and
    /// one resend after a 401 for the token that was sent.
    public func fetch(_ request: FetchRequest, provider: String?, account: AccountChoice = AccountChoice(), shape: TokenShape? = nil,
                      login: FetchLogin = .hint, context: LoginContext = LoginContext()) async throws(AuthError) -> FetchResponse {
        guard let route = try router.route(url: request.url, provider: provider) else {
            guard config.fetchesUncoveredURLs else {
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
            let (renewed, _) = try await credentialAfterRejection(c, shape, failedAuthorization: credential.authorization)
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
