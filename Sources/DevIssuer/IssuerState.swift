import JSON
import Locking
import Wire

/// Everything the issuer knows and remembers, with all mutable parts behind one lock.
///
/// One owner for tokens, families, counters and faults keeps operations that
/// span tables atomic (rotating a refresh token, revoking a family, counting a
/// request and consuming its fault) without any lock-ordering rules. Users and
/// clients never change after init and live outside the lock.
///
/// Every token belongs to a *family*: one login (or client_credentials grant)
/// and everything rotated from it. Revoking a family invalidates all of its
/// tokens at once, which is what refresh-token reuse detection needs.
final class IssuerState: Sendable {
    /// `/git/demo.git`, made on first use.
    let repository = DemoRepository()
    let users: [String: UserProfile]
    /// The clients of `DevIssuerOptions`; `clients` adds the registered ones.
    let configuredClients: [String: String?]
    let defaultAccessTokenLifetime: Int
    let refreshTokenReuseGrace: Int
    let deviceCodeLifetime: Int
    let defaultDeviceInterval: Int
    let defaultRequireNonce: Bool
    let resources: Set<String>
    let audiences: Set<String>
    let clientScopes: [String: [String]]
    private let passwords: [String: String]
    private let store: Locked<Store>
    /// Registered clients, published metadata documents and discovery faults
    /// (IssuerState+Learning.swift): apart from `store`, since no operation spans both.
    let learning = Locked(LearningState())
    /// Replay memory, mandatory nonces and faults for DPoP proofs.
    let dpop = DPoPState()
    /// PAR, client keys and FAPI 2.0 per client, pushed requests, assertion replay.
    let clientPolicies: ClientPolicies
    /// The key ID-JAGs are signed with, published at `/jwks`, and the issuers whose ID-JAGs the jwt-bearer grant accepts.
    let signing = IssuerSigningKey()
    let trustedIssuers: [String]

    init(options: DevIssuerOptions) {
        var users: [String: UserProfile] = [:]
        for (index, username) in options.users.keys.sorted().enumerated() {
            let name = username.prefix(1).uppercased() + username.dropFirst()
            users[username] = UserProfile(id: String(index + 1), username: username, name: name)
        }
        self.users = users
        self.passwords = options.users
        self.configuredClients = options.clients
        self.defaultAccessTokenLifetime = options.accessTokenLifetime
        self.refreshTokenReuseGrace = options.refreshTokenReuseGrace
        self.deviceCodeLifetime = options.deviceCodeLifetime
        self.defaultDeviceInterval = options.deviceInterval
        self.defaultRequireNonce = options.requireNonce
        self.resources = Set(options.resources)
        self.audiences = Set(options.audiences)
        self.clientScopes = options.clientScopes
        self.clientPolicies = ClientPolicies(options.clientPolicies)
        self.trustedIssuers = options.trustedIssuers
        self.store = Locked(Store(accessTokenLifetime: options.accessTokenLifetime, deviceInterval: options.deviceInterval,
                                  requireNonce: options.requireNonce))
    }

    // MARK: Users

    /// The user if `password` is right; compared in constant time.
    func user(username: String, password: String) -> UserProfile? {
        guard let expected = passwords[username], let user = users[username] else { return nil }
        return SecretComparison.equal(expected, password) ? user : nil
    }

    // MARK: Session API

    /// A new session token starting a new family.
    func startSession(for user: UserProfile, now: Double) -> String {
        store.withLock { store in
            store.mintSessionToken(for: user, family: store.newFamily(), now: now)
        }
    }

    /// Exchanges a current session token (expired is fine, revoked is not) for a new one;
    /// the old one stops working.
    func refreshSession(_ token: String, now: Double) -> (jwt: String, user: UserProfile)? {
        store.withLock { store -> (jwt: String, user: UserProfile)? in
            guard let record = store.accessTokens[token], record.kind == .session, !store.isRevoked(record),
                  let username = record.username, let user = users[username] else { return nil }
            store.accessTokens[token]?.revoked = true
            return (store.mintSessionToken(for: user, family: record.family, now: now), user)
        }
    }

    /// Revokes a session token; `false` when the token was never issued as one.
    func endSession(_ token: String) -> Bool {
        store.withLock { store in
            guard let record = store.accessTokens[token], record.kind == .session else { return false }
            store.accessTokens[token]?.revoked = true
            return true
        }
    }

    // MARK: OAuth

    /// The request's `resource` and `audience` checked against the configured ones and
    /// this issuer's own protected API (`ISSUER/api`).
    func target(resource: String?, audience: String?, issuer: String) -> TokenTarget.Parsed {
        TokenTarget.parse(resource: resource, audience: audience,
                          knownResources: resources.union([issuer + "/api", LearnableResource.resource(issuer)]),
                          knownAudiences: audiences)
    }

    /// Why `clientID` may not have `scope` by client_credentials (`nil`: it may).
    func clientScopeProblem(clientID: String, scope: String?) -> String? {
        guard let allowed = clientScopes[clientID] else { return nil }
        let refused = IssuerState.scopes(scope).filter { !allowed.contains($0) }
        guard !refused.isEmpty else { return nil }
        return "scope \(refused.joined(separator: " ")) is not allowed for client \(clientID); allowed: \(allowed.joined(separator: " "))"
    }

    /// Tokens for a fresh grant (password or client_credentials), in a new family.
    /// With `grant`, counted under `GrantCounter` names for the user (or client) and the request's shape.
    func issueTokens(user: UserProfile?, clientID: String, scope: String?, target: TokenTarget, refreshable: Bool,
                     countingAs grant: String? = nil, issuer: String, now: Double) -> TokenGrant {
        store.withLock { store in
            if let grant {
                store.count(GrantCounter.keys(grant: grant, subject: user?.username ?? clientID, requestedScope: scope, target: target))
            }
            return store.mintGrant(user: user, clientID: clientID, scope: scope, refreshScope: scope, target: target,
                                   family: store.newFamily(), refreshable: refreshable, issuer: issuer, now: now)
        }
    }

    /// Rotates a refresh token, with reuse detection (see `RefreshOutcome`). A `requestedScope`
    /// narrows the new access token only (RFC 6749 §6): the rotated refresh token keeps the
    /// original grant's scope. Tokens issued (or replayed) are counted under the
    /// `GrantCounter` names `refresh_token:USER…`.
    func redeemRefreshToken(_ token: String, clientID: String, requestedScope: String?, target: TokenTarget,
                            issuer: String, now: Double) -> RefreshOutcome {
        store.withLock { store -> RefreshOutcome in
            guard let record = store.refreshTokens[token] else { return .invalid("unknown refresh token") }
            guard record.clientID == clientID else { return .invalid("refresh token was issued to another client") }
            guard !record.revoked, !store.isRevoked(family: record.family) else { return .invalid("refresh token revoked") }
            let counterKeys = GrantCounter.keys(grant: "refresh_token", subject: record.username ?? record.clientID,
                                                requestedScope: requestedScope, target: target)
            if let usedAt = record.usedAt {
                if now - usedAt < Double(refreshTokenReuseGrace), let successor = record.successor {
                    store.count(counterKeys)
                    return .replayed(successor)
                }
                store.revokedFamilies.insert(record.family)
                return .reuseDetected
            }
            let scope: String?
            if let requestedScope {
                let granted = IssuerState.scopes(record.scope)
                let refused = IssuerState.scopes(requestedScope).filter { !granted.contains($0) }
                guard refused.isEmpty else {
                    let grantedText = granted.isEmpty ? "no scope" : granted.joined(separator: " ")
                    return .invalidScope("scope \(refused.joined(separator: " ")) was not granted; the grant has \(grantedText)")
                }
                scope = requestedScope
            } else {
                scope = record.scope
            }
            let user = record.username.flatMap { users[$0] }
            let grant = store.mintGrant(user: user, clientID: clientID, scope: scope, refreshScope: record.scope, target: target,
                                        family: record.family, refreshable: true, issuer: issuer, now: now)
            store.refreshTokens[token]?.usedAt = now
            store.refreshTokens[token]?.successor = grant
            store.count(counterKeys)
            return .issued(grant)
        }
    }

    /// RFC 7009 revocation. A refresh token takes its whole family with it
    /// (RFC 7009 §2.1: access tokens of the same grant SHOULD be invalidated too).
    func revoke(_ token: String, clientID: String) -> RevocationOutcome {
        store.withLock { store in
            if let record = store.refreshTokens[token] {
                guard record.clientID == clientID else { return .wrongClient }
                store.refreshTokens[token]?.revoked = true
                store.revokedFamilies.insert(record.family)
                return .revoked
            }
            if let record = store.accessTokens[token] {
                if let owner = record.clientID, owner != clientID { return .wrongClient }
                store.accessTokens[token]?.revoked = true
                return .revoked
            }
            return .unknown
        }
    }

    /// Whom `token` speaks for and what it is for, if it is known, unrevoked and unexpired.
    func describe(accessToken token: String, now: Double) -> ValidAccessToken? {
        store.withLock { store -> ValidAccessToken? in
            guard let record = store.accessTokens[token], !store.isRevoked(record), now < record.expiresAt else { return nil }
            let subject: TokenSubject
            if let username = record.username {
                guard let user = users[username] else { return nil }
                subject = .user(user)
            } else if let clientID = record.clientID {
                subject = .client(clientID)
            } else {
                return nil
            }
            return ValidAccessToken(subject: subject, clientID: record.clientID, scope: record.scope, target: record.target)
        }
    }

    /// The RFC 7638 thumbprint an access token is bound to (`cnf.jkt`); nil for a bearer or unknown token.
    func dpopBinding(ofAccessToken token: String) -> String? { store.withLock { $0.accessTokens[token]?.jkt } }

    /// The key a refresh token is bound to: its grant was proven with it, and so must its refreshes be.
    func dpopBinding(ofRefreshToken token: String) -> String? { store.withLock { $0.refreshTokens[token]?.jkt } }

    /// The user an unexpired ID token of this issuer names (RFC 8693 `subject_token_type` id_token); nil for any other token.
    func user(ofIDToken token: String, now: Double) -> UserProfile? {
        store.withLock { store in
            guard let record = store.idTokens[token], now < record.expiresAt else { return nil }
            return users[record.username]
        }
    }

    /// The user of a live, unused refresh token `clientID` holds (a subject token; presenting it spends nothing); nil otherwise.
    func user(ofRefreshToken token: String, clientID: String) -> UserProfile? {
        store.withLock { store in
            guard let record = store.refreshTokens[token], record.clientID == clientID, !record.revoked, record.usedAt == nil,
                  !store.isRevoked(family: record.family), let username = record.username else { return nil }
            return users[username]
        }
    }

    /// Counts an ID-JAG issued to `user` (`id_jag:USER`).
    func countIDJAG(user: String) { store.withLock { $0.count(["id_jag:\(user)"]) } }

    /// Tokens for an RFC 8693 exchange or a jwt-bearer grant: an access token for `user` in a new family, never a
    /// refresh token (the client exchanges again), `act` naming the actor when one was presented.
    func issueExchangedToken(user: UserProfile, clientID: String, scope: String?, target: TokenTarget, act: JSONValue?,
                             countingAs grant: String, issuer: String, now: Double) -> TokenGrant {
        store.withLock { store in
            store.count(GrantCounter.keys(grant: grant, subject: user.username, requestedScope: scope, target: target))
            return store.mintGrant(user: user, clientID: clientID, scope: scope, refreshScope: nil, target: target,
                                   family: store.newFamily(), refreshable: false, issuer: issuer, now: now, act: act)
        }
    }

    /// Whom `token` speaks for, if it is known, unrevoked and unexpired.
    func subject(ofAccessToken token: String, now: Double) -> TokenSubject? {
        describe(accessToken: token, now: now)?.subject
    }

    // MARK: Device authorization (RFC 8628)

    /// A new device authorization request: its codes, lifetime and polling interval.
    func startDeviceAuthorization(clientID: String, scope: String?, now: Double)
        -> (deviceCode: String, userCode: String, expiresIn: Int, interval: Int)
    {
        store.withLock { store in
            let interval = store.deviceInterval
            let codes = store.devices.start(clientID: clientID, scope: scope, lifetime: deviceCodeLifetime, interval: interval, now: now)
            return (codes.deviceCode, codes.userCode, deviceCodeLifetime, interval)
        }
    }

    /// One poll of the device_code grant; mints tokens (a new family) once the user approved.
    func pollDeviceCode(_ deviceCode: String, clientID: String, target: TokenTarget, issuer: String, now: Double) -> DeviceTokenOutcome {
        store.withLock { store -> DeviceTokenOutcome in
            switch store.devices.poll(deviceCode: deviceCode, clientID: clientID, now: now) {
            case .pending: return .pending
            case .slowDown: return .slowDown
            case .denied: return .denied
            case .expired: return .expired
            case .invalid(let reason): return .invalid(reason)
            case .approved(let username, let scope):
                guard let user = users[username] else { return .invalid("the approving user no longer exists") }
                return .issued(store.mintGrant(user: user, clientID: clientID, scope: scope, refreshScope: scope, target: target,
                                               family: store.newFamily(), refreshable: true, issuer: issuer, now: now))
            }
        }
    }

    /// Whether `userCode` names a pending, unexpired request.
    func isPendingDevice(userCode: String, now: Double) -> Bool {
        store.withLock { $0.devices.pending(userCode: userCode, now: now) != nil }
    }

    /// Approves for `username` (who must exist) or, with `nil`, denies a pending request.
    func decideDevice(userCode: String, approvingFor username: String?, now: Double) -> Bool {
        if let username, users[username] == nil { return false }
        return store.withLock { $0.devices.decide(userCode: userCode, approvingFor: username, now: now) }
    }

    func setDeviceInterval(_ seconds: Int) {
        store.withLock { $0.deviceInterval = max(0, seconds) }
    }

    func forceSlowDown(_ count: Int) {
        store.withLock { $0.devices.forcedSlowDowns = max(0, count) }
    }

    func expireDeviceCodes() {
        store.withLock { $0.devices.expireAll() }
    }

    /// What device authorizations announce as `verification_uri` (`nil`: the real page).
    var deviceVerificationURIOverride: String? { store.withLock { $0.faults.verificationURI } }

    func setDeviceVerificationURI(_ uri: String?) {
        store.withLock { $0.faults.verificationURI = uri }
    }

    // MARK: Authorization code (RFC 6749 §4.1, RFC 7636)

    /// The user `GET /authorize` logs in at once, without a form (`nil`: show the form).
    var autoApproveUser: String? { store.withLock { $0.autoApproveUser } }

    func setAutoApprove(username: String?) {
        store.withLock { $0.autoApproveUser = username }
    }

    /// Whether an `openid` authorization request without a `nonce` is refused.
    var requireNonce: Bool { store.withLock { $0.requireNonce } }

    func setRequireNonce(_ required: Bool) {
        store.withLock { $0.requireNonce = required }
    }

    /// A fresh single-use code for an approved authorization request.
    func issueAuthorizationCode(_ request: AuthorizationRequest, user: UserProfile, now: Double) -> String {
        let record = AuthorizationCodes.Record(clientID: request.clientID, username: user.username, redirectURI: request.redirectURI,
                                               codeChallenge: request.codeChallenge, scope: request.scope, nonce: request.nonce,
                                               resource: request.resource, dpopJkt: request.dpopJkt, expiresAt: now + AuthorizationCodes.lifetime)
        return store.withLock { $0.codes.issue(record) }
    }

    /// Exchanges a code for tokens (a new family). A second exchange of the same code
    /// revokes every token the first one produced. The token is bound to the authorization
    /// request's `resource` when the token request names none; naming another is
    /// `invalid_target` (RFC 8707 §2.2) and spends nothing.
    func redeemAuthorizationCode(_ code: String, clientID: String, redirectURI: String?, verifier: String?,
                                 target: TokenTarget, issuer: String, now: Double) -> CodeRedemption {
        store.withLock { store -> CodeRedemption in
            switch store.codes.check(code: code, clientID: clientID, redirectURI: redirectURI, verifier: verifier, now: now) {
            case .invalid(let reason):
                return .invalid(reason)
            case .replayed(let family):
                store.revokedFamilies.insert(family)
                return .invalid("the authorization code was already used; the tokens issued for it are revoked")
            case .valid(let record):
                guard let user = users[record.username] else { return .invalid("the authorizing user no longer exists") }
                var bound = target
                if let authorized = record.resource {
                    if let asked = target.resource, asked != authorized {
                        return .invalidTarget("resource \(asked) was not the one authorized (\(authorized))")
                    }
                    bound.resource = authorized
                }
                let family = store.newFamily()
                store.codes.markRedeemed(code, family: family)
                return .issued(store.mintGrant(user: user, clientID: clientID, scope: record.scope, refreshScope: record.scope,
                                               target: bound, family: family, refreshable: true, issuer: issuer, now: now, nonce: record.nonce))
            }
        }
    }

    /// Invalidates every token issued so far; later logins work normally.
    func revokeAll() {
        store.withLock { $0.familiesRevokedBelow = $0.nextFamily }
    }

    func setAccessTokenLifetime(_ seconds: Int) {
        store.withLock { $0.accessTokenLifetime = seconds }
    }

    // MARK: Faults

    func setLatency(milliseconds: Int) {
        store.withLock { $0.faults.latencyMilliseconds = max(0, milliseconds) }
    }

    func failNext(_ count: Int, status: Int) {
        store.withLock {
            $0.faults.failRemaining = max(0, count)
            $0.faults.failStatus = status
        }
    }

    func rejectAPINext(_ count: Int) {
        store.withLock { $0.faults.apiRejectRemaining = max(0, count) }
    }

    /// Whether the protected API must refuse this request's token regardless of its validity.
    func takeAPIRejection() -> Bool {
        store.withLock { store in
            guard store.faults.apiRejectRemaining > 0 else { return false }
            store.faults.apiRejectRemaining -= 1
            return true
        }
    }

    func dropNext(_ count: Int) {
        store.withLock { $0.faults.dropRemaining = max(0, count) }
    }

    func answerNext(_ endpoint: String, status: Int, body: [UInt8]) {
        store.withLock { $0.faults.scripted.append((endpoint, status, body)) }
    }

    /// Counts the request under `endpoints` and consumes at most one pending fault for it, atomically.
    func admit(countingAs endpoints: [String]) -> FaultDecision {
        store.withLock { store in
            for key in endpoints { store.counts[key, default: 0] += 1 }
            var decision = FaultDecision(latencyMilliseconds: store.faults.latencyMilliseconds, action: .none)
            if store.faults.dropRemaining > 0 {
                store.faults.dropRemaining -= 1
                decision.action = .drop
            } else if store.faults.failRemaining > 0 {
                store.faults.failRemaining -= 1
                decision.action = .fail(status: store.faults.failStatus)
            } else if let index = store.faults.scripted.firstIndex(where: { endpoints.contains($0.endpoint) }) {
                let answer = store.faults.scripted.remove(at: index)
                decision.action = .answer(status: answer.status, body: answer.body)
            }
            return decision
        }
    }

    /// Clears latency, pending failures, drops, forced slow-downs and a replaced verification
    /// URI, turns auto-approval off, and restores the configured token lifetime, device
    /// interval and nonce requirement.
    func resetFaults() {
        store.withLock {
            $0.faults = Faults()
            $0.accessTokenLifetime = defaultAccessTokenLifetime
            $0.deviceInterval = defaultDeviceInterval
            $0.devices.forcedSlowDowns = 0
            $0.autoApproveUser = nil
            $0.requireNonce = defaultRequireNonce
        }
        learning.withLock { $0.faults = [] }
        dpop.reset()
        clientPolicies.reset()
    }

    // MARK: Counters

    var counts: [String: Int] { store.withLock { $0.counts } }

    /// Tokens issued per subject and shape, by `GrantCounter` name.
    var grantCounts: [String: Int] { store.withLock { $0.grantCounts } }

    /// An endpoint's request count, or a `GrantCounter` name's issued tokens (the names cannot clash:
    /// endpoint names have no colon).
    func count(_ name: String) -> Int { store.withLock { $0.counts[name] ?? $0.grantCounts[name] ?? 0 } }

    func resetCounts() {
        store.withLock {
            $0.counts = [:]
            $0.grantCounts = [:]
        }
    }

    /// Space-separated scope tokens (RFC 6749 §3.3).
    static func scopes(_ scope: String?) -> [String] {
        (scope ?? "").split(separator: " ").map(String.init)
    }
}

/// The lock-protected tables. Token strings are the keys: lookups are what
/// validation means here, since token signatures are not real (see `DevJWT`).
private struct Store {
    enum Kind {
        case session
        case access
    }

    struct AccessTokenRecord {
        let kind: Kind
        let username: String?
        let clientID: String?
        let family: Int
        let expiresAt: Double
        var scope: String? = nil
        var target = TokenTarget.unbound
        var revoked = false
        /// RFC 9449 `cnf.jkt`: the key whose proof must come with the token.
        var jkt: String? = nil
    }

    struct RefreshTokenRecord {
        let clientID: String
        let username: String?
        let scope: String?
        let family: Int
        var revoked = false
        var usedAt: Double? = nil
        var successor: TokenGrant? = nil
        var jkt: String? = nil
    }

    var accessTokens: [String: AccessTokenRecord] = [:]
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    /// The ID tokens issued, by token: whom each names and until when, for RFC 8693 exchanges that present one.
    var idTokens: [String: (username: String, clientID: String, expiresAt: Double)] = [:]
    var revokedFamilies: Set<Int> = []
    /// Families numbered below this were revoked wholesale by `revokeAll`.
    var familiesRevokedBelow = 0
    var nextFamily = 0
    var accessTokenLifetime: Int
    /// `interval` for device codes issued from now on.
    var deviceInterval: Int
    var devices = DeviceAuthorizations()
    var codes = AuthorizationCodes()
    var autoApproveUser: String? = nil
    var requireNonce: Bool
    var counts: [String: Int] = [:]
    /// Kept apart from `counts` so the endpoint table (and `/_admin/stats`) reads as before.
    var grantCounts: [String: Int] = [:]
    var faults = Faults()

    mutating func count(_ keys: [String]) {
        for key in keys { grantCounts[key, default: 0] += 1 }
    }

    mutating func newFamily() -> Int {
        defer { nextFamily += 1 }
        return nextFamily
    }

    func isRevoked(family: Int) -> Bool {
        family < familiesRevokedBelow || revokedFamilies.contains(family)
    }

    func isRevoked(_ record: AccessTokenRecord) -> Bool {
        record.revoked || isRevoked(family: record.family)
    }

    /// `(iat, exp, expiresAt)`: whole seconds for the JWT, exact time for validation.
    /// `exp` rounds down, so a client that trusts it refreshes slightly early, never late.
    private func lifetime(from now: Double) -> (iat: Int64, exp: Int64, expiresAt: Double) {
        let iat = Int64(now.rounded(.down))
        return (iat, iat + Int64(accessTokenLifetime), now + Double(accessTokenLifetime))
    }

    mutating func mintSessionToken(for user: UserProfile, family: Int, now: Double) -> String {
        let times = lifetime(from: now)
        let token = DevJWT.mint(claims: [
            "sub": .string(user.username),
            "name": .string(user.name),
            "iat": .int(times.iat),
            "exp": .int(times.exp),
            "jti": .string(SecureRandom.token(bytes: 12)),
        ])
        accessTokens[token] = AccessTokenRecord(kind: .session, username: user.username, clientID: nil,
                                                family: family, expiresAt: times.expiresAt)
        return token
    }

    /// An access token (and optionally a refresh token and, for `openid`, an id token
    /// carrying the authorization request's `nonce`) in `family`.
    /// The access token is bound to `scope` and `target` (its `aud` claim, the client id without a target).
    mutating func mintGrant(user: UserProfile?, clientID: String, scope: String?, refreshScope: String?, target: TokenTarget,
                            family: Int, refreshable: Bool, issuer: String, now: Double, nonce: String? = nil, act: JSONValue? = nil) -> TokenGrant {
        let times = lifetime(from: now)
        let jkt = DPoPBinding.jkt
        var claims: JSONObject = [
            "iss": .string(issuer),
            "sub": .string(user?.username ?? clientID),
            "aud": target.audienceClaim ?? .string(clientID),
            "client_id": .string(clientID),
        ]
        if let scope { claims["scope"] = .string(scope) }
        claims["iat"] = .int(times.iat)
        claims["exp"] = .int(times.exp)
        claims["jti"] = .string(SecureRandom.token(bytes: 12))
        if let jkt { claims["cnf"] = ["jkt": .string(jkt)] }
        if let act { claims["act"] = act }
        let accessToken = DevJWT.mint(claims: claims)
        accessTokens[accessToken] = AccessTokenRecord(kind: .access, username: user?.username, clientID: clientID,
                                                      family: family, expiresAt: times.expiresAt, scope: scope, target: target, jkt: jkt)

        var refreshToken: String? = nil
        if refreshable {
            let token = SecureRandom.token(bytes: 32)
            refreshTokens[token] = RefreshTokenRecord(clientID: clientID, username: user?.username,
                                                      scope: refreshScope, family: family, jkt: jkt)
            refreshToken = token
        }

        var idToken: String? = nil
        if let user, IssuerState.scopes(scope).contains("openid") {
            var idClaims = user.standardClaims
            idClaims["iss"] = .string(issuer)
            idClaims["aud"] = .string(clientID)
            idClaims["iat"] = .int(times.iat)
            idClaims["exp"] = .int(times.exp)
            if let nonce { idClaims["nonce"] = .string(nonce) }
            let minted = DevJWT.mint(claims: idClaims)
            idTokens[minted] = (user.username, clientID, times.expiresAt)
            idToken = minted
        }
        return TokenGrant(accessToken: accessToken, expiresIn: max(0, accessTokenLifetime),
                          refreshToken: refreshToken, scope: scope, idToken: idToken, dpopBound: jkt != nil)
    }
}

/// Pending injected faults.
private struct Faults {
    var latencyMilliseconds = 0
    var failRemaining = 0
    var failStatus = 503
    var dropRemaining = 0
    var apiRejectRemaining = 0
    /// Replaces device authorizations' `verification_uri`, to test what clients do with a bad one.
    var verificationURI: String? = nil
    /// Verbatim answers for the next requests counted under an endpoint name, in order.
    var scripted: [(endpoint: String, status: Int, body: [UInt8])] = []
}

/// The result of presenting a refresh token.
enum RefreshOutcome: Sendable {
    /// First use: new access token and rotated refresh token.
    case issued(TokenGrant)
    /// Reuse within the grace period: the successor tokens of the first use.
    case replayed(TokenGrant)
    /// Reuse after the grace period: the whole family is now revoked.
    case reuseDetected
    /// Unknown, revoked, or issued to another client.
    case invalid(String)
    /// The requested scope is not part of the original grant; the description says which.
    case invalidScope(String)
}

/// The result of polling with a device code (RFC 8628 §3.5).
enum DeviceTokenOutcome: Sendable {
    case issued(TokenGrant)
    case pending
    case slowDown
    case denied
    case expired
    case invalid(String)
}

/// The result of exchanging an authorization code.
enum CodeRedemption: Sendable {
    case issued(TokenGrant)
    case invalid(String)
    /// The token request named another resource than the authorization request.
    case invalidTarget(String)
}

/// The result of an RFC 7009 revocation request.
enum RevocationOutcome: Sendable {
    case revoked
    case unknown
    case wrongClient
}

/// Whom a valid access token speaks for.
enum TokenSubject: Sendable {
    case user(UserProfile)
    case client(String)
}

/// A valid access token as a resource server sees it: whom it speaks for and what it is for.
struct ValidAccessToken: Sendable {
    let subject: TokenSubject
    /// `nil` for session tokens.
    let clientID: String?
    let scope: String?
    let target: TokenTarget
}

/// What fault injection decided for one request.
struct FaultDecision: Sendable {
    enum Action: Sendable {
        case none
        case fail(status: Int)
        case drop
        case answer(status: Int, body: [UInt8])
    }

    var latencyMilliseconds: Int
    var action: Action
}
