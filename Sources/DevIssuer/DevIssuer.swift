#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking

/// A loopback-only identity issuer for demos and tests.
///
/// It speaks the login styles `auth-agent` brokers — a JSON session API
/// (`POST /sessions`, Rails/Devise-like), an OAuth 2.0 token endpoint with
/// refresh-token rotation and reuse detection, the device authorization grant
/// (RFC 8628) and the authorization code grant with PKCE and loopback redirects
/// (RFC 7636, RFC 8252), with small HTML pages for the person's part — so the
/// agent can be exercised end to end without a real identity provider. Faults (latency, error
/// statuses, dropped connections, mass revocation) can be injected from Swift
/// or over HTTP (`/_admin/…`) so clients' retry and re-login paths get tested,
/// and per-endpoint counters let tests assert how many calls a client made.
///
/// It binds 127.0.0.1 only and has no real cryptography: tokens are
/// JWT-shaped but validated by table lookup, and the credentials are fixed.
/// Never expose it beyond the local machine.
public final class DevIssuer: Sendable {
    private let state: IssuerState
    private let server = Locked<HTTPServer?>(nil)
    private let boundPort = Locked<UInt16>(0)
    /// Seconds since 1970 by the issuer's clock: token expiry, device codes, refresh-token grace, DPoP `iat`.
    private let now: @Sendable () -> Double

    /// - Parameter now: the issuer's time; the real clock unless a test shares a virtual one
    ///   with the agent it plays against, so that token lifetimes pass without waiting.
    public init(options: DevIssuerOptions = .init(), now: @escaping @Sendable () -> Date = { Date() }) {
        state = IssuerState(options: options)
        self.now = { now().timeIntervalSince1970 }
    }

    deinit {
        stop()
    }

    /// Binds 127.0.0.1:`port` (0 picks a free port), starts serving, and returns the bound port.
    /// Can be called again after `stop()`; tokens issued before survive a restart.
    @discardableResult
    public func start(port: UInt16 = 0) throws -> UInt16 {
        try server.withLock { server in
            guard server == nil else { throw DevIssuerError.alreadyStarted }
            let state = self.state
            let now = self.now
            let started = try HTTPServer(port: port) { boundPort in
                let router = IssuerRouter(state: state, issuer: "http://127.0.0.1:\(boundPort)", now: now)
                return { router.handle($0) }
            }
            server = started
            boundPort.withLock { $0 = started.port }
            return started.port
        }
    }

    /// The bound port; 0 before the first `start`, the last port after `stop`.
    public var port: UInt16 { boundPort.withLock { $0 } }

    /// `http://127.0.0.1:PORT`, also the `iss` of issued tokens.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Closes the listener and every open connection; returns once the port is free. Idempotent.
    public func stop() {
        let running = server.withLock { server -> HTTPServer? in
            defer { server = nil }
            return server
        }
        running?.stop()
        state.repository.remove()
    }

    // MARK: Fault injection

    /// Delays every non-admin response by `milliseconds` (0 turns it off).
    public func setLatency(milliseconds: Int) {
        state.setLatency(milliseconds: milliseconds)
    }

    /// The next `count` non-admin requests are answered with `status` and a small JSON body.
    public func failNext(_ count: Int, status: Int = 503) {
        state.failNext(count, status: status)
    }

    /// The next `count` non-admin requests get their connection closed without an answer.
    public func dropNext(_ count: Int) {
        state.dropNext(count)
    }

    /// The next `count` requests to the protected API (`/api/…`) answer 401 whatever their token.
    public func rejectAPINext(_ count: Int) {
        state.rejectAPINext(count)
    }

    /// The next request counted as `endpoint` (a name of `count(_:)`, such as
    /// `token.password` or `revoke`) is answered with exactly `status` and `body`
    /// instead of being handled: for servers that answer in odd ways (empty error
    /// bodies, duplicate keys, tokens with control characters). Answers queue up.
    public func answerNext(_ endpoint: String, status: Int, body: String) {
        state.answerNext(endpoint, status: status, body: Array(body.utf8))
    }

    /// DPoP (RFC 9449): whether proofs must carry the issuer's current nonce (`use_dpop_nonce` otherwise).
    public func setDPoPNonceRequired(_ required: Bool) {
        state.dpop.setNonceRequired(required)
    }

    /// A new mandatory nonce: clients holding the old one are asked (`use_dpop_nonce`) once more.
    public func rotateDPoPNonce() {
        state.dpop.rotateNonce()
    }

    /// The next `count` token requests with a valid proof get unbound `Bearer` tokens, as a server without DPoP would answer.
    public func answerBearerToDPoPNext(_ count: Int) {
        state.dpop.answerBearerNext(count)
    }

    /// The next `count` DPoP proofs are refused (`invalid_dpop_proof`), whatever they say.
    public func refuseDPoPProofsNext(_ count: Int) {
        state.dpop.refuseProofsNext(count)
    }

    /// Invalidates every session, access and refresh token issued so far.
    public func revokeAll() {
        state.revokeAll()
    }

    /// Lifetime of tokens issued from now on; 0 or negative issues already-expired tokens.
    public func setAccessTokenLifetime(_ seconds: Int) {
        state.setAccessTokenLifetime(seconds)
    }

    // MARK: Device and authorization code flows

    /// `interval` (seconds between polls) for device codes issued from now on.
    public func setDeviceInterval(_ seconds: Int) {
        state.setDeviceInterval(seconds)
    }

    /// The next `count` device-code polls answer `slow_down` whatever their timing;
    /// each also adds 5 s to that device code's interval, as a real slow-down does.
    public func forceSlowDown(_ count: Int) {
        state.forceSlowDown(count)
    }

    /// Every device code issued so far answers `expired_token` from now on.
    public func expireDeviceCodes() {
        state.expireDeviceCodes()
    }

    /// Approves the pending device login showing `userCode` as `username`, as the
    /// verification page would; `false` when the code is not pending or the user unknown.
    @discardableResult
    public func approveDevice(userCode: String, username: String) -> Bool {
        state.decideDevice(userCode: userCode, approvingFor: username, now: now())
    }

    /// Denies the pending device login showing `userCode`; `false` when it is not pending.
    @discardableResult
    public func denyDevice(userCode: String) -> Bool {
        state.decideDevice(userCode: userCode, approvingFor: nil, now: now())
    }

    /// Device authorizations started from now on announce `uri` as their `verification_uri`
    /// (and `uri?user_code=…` as `verification_uri_complete`), to test what a client does
    /// with a bad one; `nil` announces the real verification page again.
    public func setDeviceVerificationURI(_ uri: String?) {
        state.setDeviceVerificationURI(uri)
    }

    /// Whether `/authorize` refuses an `openid` request without a `nonce` from now on
    /// (see `DevIssuerOptions.requireNonce`).
    public func setRequireNonce(_ required: Bool) {
        state.setRequireNonce(required)
    }

    /// With a username, `GET /authorize` with valid parameters redirects at once with a
    /// code for that user instead of showing the login form; `nil` shows the form again.
    public func setAutoApprove(username: String?) {
        state.setAutoApprove(username: username)
    }

    // MARK: Learning an API (RFC 9728, RFC 8414, RFC 7591, client metadata documents)

    /// `ISSUER/mcp`, the protected resource that describes itself (RFC 9728) for clients
    /// that learn an API with no configuration; `ISSUER/mcp/admin` also needs scope `admin`.
    public var learnableResource: String { baseURL + LearnableResource.path }

    /// Its metadata, `ISSUER/.well-known/oauth-protected-resource/mcp`.
    public var learnableResourceMetadata: String { LearnableResource.metadataURL(baseURL) }

    /// Turns `fault` on until `clearDiscoveryFaults` (or an admin reset).
    public func injectDiscoveryFault(_ fault: DiscoveryFault) {
        state.setDiscoveryFault(fault, on: true)
    }

    public func clearDiscoveryFaults() {
        state.clearDiscoveryFaults()
    }

    /// Holds client `clientID` to a policy (adding it, with `secret` — nil for a public client — when
    /// `secret` is given): its authorization requests must be pushed, `jwk` checks its `private_key_jwt`
    /// assertions, `fapi2` turns FAPI 2.0's refusals on. As `POST /_admin/client`.
    public func setClient(_ clientID: String, secret: String?? = nil, requirePAR: Bool = false, jwk: JSONObject? = nil, fapi2: Bool = false) {
        state.clientPolicies.set(ClientPolicy(requirePAR: requirePAR, jwk: jwk, fapi2: fapi2), for: clientID, secret: secret)
    }

    /// Seconds a pushed request's `request_uri` lives from now on (60 by default; `parLifetime` fault).
    public func setPARLifetime(_ seconds: Int) {
        state.clientPolicies.parLifetime = max(1, seconds)
    }

    /// Serves `document` at `ISSUER/clients/NAME` and returns that URL: a Client ID
    /// Metadata Document whose `client_id` should be that URL. The issuer fetches it
    /// when the URL is used as a `client_id` at `/authorize`.
    @discardableResult
    public func publishClientMetadataDocument(name: String, document: JSONObject) -> String {
        state.publishClientMetadata(name: name, document: document)
        return baseURL + ClientMetadataDocuments.pathPrefix + name
    }

    /// A document for a native public client at `ISSUER/clients/NAME` with `redirect_uris`
    /// `http://127.0.0.1/callback` (any port, RFC 8252) and `client_name`; returns its URL.
    @discardableResult
    public func publishClientMetadataDocument(name: String, clientName: String = "auth-agent", scope: String? = nil) -> String {
        let url = baseURL + ClientMetadataDocuments.pathPrefix + name
        var document: JSONObject = [
            "client_id": .string(url), "client_name": .string(clientName),
            "redirect_uris": ["http://127.0.0.1/callback"], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        ]
        if let scope { document["scope"] = .string(scope) }
        return publishClientMetadataDocument(name: name, document: document)
    }

    /// Client ids registered at `/register` (or resolved from metadata documents) so far.
    public var registeredClientIDs: [String] { state.learning.withLock { $0.clients.keys.sorted() } }

    /// What the registration (or document) of `clientID` said, as the issuer keeps it.
    public func registration(of clientID: String) -> JSONObject? {
        state.registeredClient(clientID)?.metadata
    }

    // MARK: Observation

    /// Requests received for `endpoint` ("session", "token", "token.refresh_token", "token.device_code",
    /// "token.authorization_code", "deviceAuthorization", "device", "authorize", …), faulted ones included;
    /// or, for a name of `grantCounts`, the tokens issued under it.
    public func count(_ endpoint: String) -> Int {
        state.count(endpoint)
    }

    /// Requests received per endpoint.
    public var counts: [String: Int] { state.counts }

    /// Tokens issued per subject and shape, for asserting "one refresh per expiry per token":
    /// `refresh_token:USER` and `client_credentials:CLIENT` count every refresh_token grant
    /// (a replay within the reuse grace period included) and client_credentials grant that
    /// issued tokens; `…:SHAPE` counts those whose request had that shape — `default`
    /// without `scope`, `resource` and `audience`, else `audience=A;resource=R;scope=a,b`
    /// (the parts present, scope tokens sorted).
    public var grantCounts: [String: Int] { state.grantCounts }

    /// Zeroes `counts` and `grantCounts`.
    public func resetCounts() {
        state.resetCounts()
    }
}
