import JSON
import Locking

/// What the issuer learns about clients at run time, and the discovery faults in force.
struct LearningState: Sendable {
    /// Dynamically registered clients and clients resolved from metadata documents, by client id.
    var clients: [String: RegisteredClient] = [:]
    /// Documents served at `/clients/NAME`.
    var documents: [String: JSONObject] = [:]
    var faults: Set<DiscoveryFault> = []
}

extension IssuerState {
    /// The configured clients plus every registered one (public: no secret), for client
    /// authentication at the token, device and revocation endpoints.
    var clients: [String: String?] {
        let registered = learning.withLock { $0.clients }
        var all = configuredClients
        for (id, secret) in clientPolicies.added { all[id] = secret }
        for id in registered.keys where all[id] == nil { all[id] = .some(nil) }
        return all
    }

    func register(_ client: RegisteredClient) {
        learning.withLock { $0.clients[client.clientID] = client }
    }

    /// RFC 7592 delete: the client is unknown from now on (its tokens can no longer be refreshed).
    func unregister(_ clientID: String) {
        learning.withLock { $0.clients[clientID] = nil }
    }

    /// `/_admin/unregister`: forgets the dynamically registered client `clientID`, or all of them
    /// (nil); metadata-document clients stay. Returns the ids forgotten, sorted.
    func unregisterDynamic(_ clientID: String?) -> [String] {
        learning.withLock { state in
            let ids = state.clients.keys.filter { $0.hasPrefix(RegistrationEndpoint.dynamicPrefix) && (clientID == nil || $0 == clientID) }
            for id in ids { state.clients[id] = nil }
            return ids.sorted()
        }
    }

    /// The registration (or resolved metadata document) behind `clientID`, if any.
    func registeredClient(_ clientID: String) -> RegisteredClient? {
        learning.withLock { $0.clients[clientID] }
    }

    /// Fetches the metadata document `url` names (outside the lock: the issuer may be
    /// fetching from itself) and, when it is acceptable, remembers it as that client's
    /// registration, so the token endpoint knows the client afterwards.
    func resolveClientMetadataDocument(_ url: String) -> Result<RegisteredClient, RegistrationError> {
        let resolved = ClientMetadataDocuments.resolve(url)
        if case .success(let client) = resolved { register(client) }
        return resolved
    }

    func publishClientMetadata(name: String, document: JSONObject) {
        learning.withLock { $0.documents[name] = document }
    }

    func publishedClientMetadata(name: String) -> JSONObject? {
        learning.withLock { $0.documents[name] }
    }

    var discoveryFaults: Set<DiscoveryFault> { learning.withLock { $0.faults } }

    func setDiscoveryFault(_ fault: DiscoveryFault, on: Bool) {
        learning.withLock { state in
            if on { state.faults.insert(fault) } else { state.faults.remove(fault) }
        }
    }

    func clearDiscoveryFaults() {
        learning.withLock { $0.faults = [] }
    }

    /// The RFC 9207 `iss` for authorization responses: the issuer, or what a fault makes of it.
    func authorizationResponseIss(issuer: String) -> String? {
        let faults = discoveryFaults
        if faults.contains(.missingIss) { return nil }
        return faults.contains(.wrongIss) ? "https://attacker.example" : DiscoveryEndpoint.identifier(issuer: issuer, faults: faults)
    }
}
