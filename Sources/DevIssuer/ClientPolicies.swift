import JSON
import Locking
import Wire

/// What a client of the dev issuer is held to beyond its secret: whether its authorization
/// requests must be pushed (RFC 9126), the public key its `private_key_jwt` assertions are
/// checked with (RFC 7523 §2.2), and FAPI 2.0's refusals. Set per client by `POST /_admin/client`
/// (which may add the client too) or by `DevIssuerOptions.clientPolicies`.
struct ClientPolicy: Sendable, Equatable {
    /// RFC 9126 §5: an authorization request of this client that was not pushed is refused.
    var requirePAR = false
    /// The client's public JWK (EC P-256 or RSA), for its `private_key_jwt` assertions.
    var jwk: JSONObject?
    /// FAPI 2.0: PAR, `private_key_jwt` only, DPoP-bound tokens only, response type `code` only.
    var fapi2 = false

    var pushedOnly: Bool { requirePAR || fapi2 }

    /// FAPI 2.0's words for each refusal, so a client's log says which requirement it broke.
    static let fapiClientAuth = "FAPI 2.0 requires private_key_jwt client authentication"
    static let fapiBearer = "FAPI 2.0 requires sender-constrained tokens: send a DPoP proof"
    static let pushRequired = "Pushed Authorization Request must be used"
}

/// The policies, the clients `/_admin/client` added, the pushed requests waiting for the browser,
/// and the client assertions' `jti`s already used (a replayed assertion is refused).
final class ClientPolicies: Sendable {
    struct Pushed: Sendable {
        let clientID: String
        let parameters: [String: String]
        let expiresAt: Double
    }

    private struct Memory {
        var policies: [String: ClientPolicy]
        var added: [String: String?] = [:]
        var pushed: [String: Pushed] = [:]
        var assertionJTIs: [String: Double] = [:]
        var parLifetime = 60
    }

    private let memory: Locked<Memory>
    private let initial: [String: ClientPolicy]

    init(_ policies: [String: ClientPolicy]) {
        initial = policies
        memory = Locked(Memory(policies: policies))
    }

    func policy(_ clientID: String) -> ClientPolicy { memory.withLock { $0.policies[clientID] ?? ClientPolicy() } }

    /// Clients `/_admin/client` added (id to secret; nil: public).
    var added: [String: String?] { memory.withLock { $0.added } }

    func set(_ policy: ClientPolicy, for clientID: String, secret: String??) {
        memory.withLock { m in
            m.policies[clientID] = policy
            if let secret { m.added[clientID] = secret }
        }
    }

    /// Seconds a pushed request's `request_uri` lives (RFC 9126 `expires_in`): 60, or a test's (`parLifetime` fault).
    var parLifetime: Int {
        get { memory.withLock { $0.parLifetime } }
        set { memory.withLock { $0.parLifetime = newValue } }
    }

    /// Keeps `parameters` under a new `request_uri` for `parLifetime` seconds.
    func push(_ parameters: [String: String], clientID: String, now: Double) -> (uri: String, expiresIn: Int) {
        memory.withLock { m in
            m.pushed = m.pushed.filter { $0.value.expiresAt > now }
            let uri = "urn:ietf:params:oauth:request_uri:" + SecureRandom.token(bytes: 18)
            m.pushed[uri] = Pushed(clientID: clientID, parameters: parameters, expiresAt: now + Double(m.parLifetime))
            return (uri, m.parLifetime)
        }
    }

    /// The pushed parameters behind `uri` while it lives (the form posts it back, so it is not spent on the first read).
    func pushed(_ uri: String, now: Double) -> Pushed? {
        memory.withLock { m in m.pushed[uri].flatMap { $0.expiresAt > now ? $0 : nil } }
    }

    /// False when the assertion `jti` was used before (RFC 7523 §3 item 7).
    func firstUse(jti: String, expiresAt: Double, now: Double) -> Bool {
        memory.withLock { m in
            if m.assertionJTIs.count > 10_000 { m.assertionJTIs = m.assertionJTIs.filter { $0.value > now } }
            return m.assertionJTIs.updateValue(expiresAt, forKey: jti) == nil
        }
    }

    func reset() {
        memory.withLock { m in
            m = Memory(policies: initial)
        }
    }

    /// `POST /_admin/client {"clientId", "secret"?: string|null, "requirePAR"?, "jwk"?, "fapi2"?}` → `{}`: sets the
    /// client's policy (`secret` present: adds or replaces the client, null making it public).
    static func admin(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let body = request.jsonBody?.objectValue, let clientID = body["clientId"]?.stringValue, !clientID.isEmpty else {
            return .error(400, "invalid_request", "expected {\"clientId\", \"secret\"?, \"requirePAR\"?, \"jwk\"?, \"fapi2\"?}")
        }
        for key in body.keys where !["clientId", "secret", "requirePAR", "jwk", "fapi2"].contains(key) {
            return .error(400, "invalid_request", "unknown field \(key)")
        }
        var policy = ClientPolicy()
        policy.requirePAR = body["requirePAR"]?.boolValue ?? false
        policy.fapi2 = body["fapi2"]?.boolValue ?? false
        if let jwk = body["jwk"] {
            guard let object = jwk.objectValue, ClientAssertionCheck.publicKey(object) != nil else {
                return .error(400, "invalid_request", "jwk must be a public EC P-256 or RSA (2048 bits or more) JWK")
            }
            policy.jwk = object
        }
        let secret: String??
        switch body["secret"] {
        case nil: secret = nil
        case .null?: secret = .some(nil)
        case let value?:
            guard let text = value.stringValue else { return .error(400, "invalid_request", "secret must be a string or null") }
            secret = .some(text)
        }
        guard secret != nil || context.state.clients[clientID] != nil else {
            return .error(404, "not_found", "no client \(clientID); add one with \"secret\" (null for a public client)")
        }
        context.state.clientPolicies.set(policy, for: clientID, secret: secret)
        return .json(200, [:])
    }
}
