/// The way a connection came in, and so what may be done through it. One agent process may
/// serve several doors at once (a socket agent's own socket and its forward socket), each
/// with a service of its own over the same store.
///
/// What each method may do at each door is declared beside its ordering (`AuthMethod.access`)
/// and checked by the engine before the method runs; what a door sees (its providers) and
/// what the core refuses there whatever the method (learning an API, fetching an uncovered
/// URL) is decided here.
public enum Door: Sendable, Equatable {
    /// The user's own host: stdio, the command line, the user's socket. Everything.
    case host
    /// A socket forwarded to another machine (`serve --forward-socket`, for `ssh -R`): whoever
    /// reaches it there gets the listed providers' tokens, and nothing else of this machine —
    /// not its other providers, learned or configured, not its network, not its sessions to end.
    case forwarded(providers: Set<String>)

    /// Whether provider `id` exists at this door (a provider left out is 1002 there, and absent from `status`).
    public func serves(_ id: String) -> Bool {
        switch self {
        case .host: return true
        case .forwarded(let providers): return providers.contains(id)
        }
    }

    /// Whether requests through this door may reach this machine's network unsigned (a `fetch`
    /// no provider covers) or make it fetch metadata, register and log in at an API of the
    /// caller's choosing (learning).
    public var reachesTheNetwork: Bool { self == .host }

    /// The configuration as this door sees it: only the providers it serves.
    func visible(_ config: AgentConfig) -> AgentConfig {
        guard case .forwarded = self else { return config }
        var subset = config
        subset.providers = config.providers.filter { serves($0.id) }
        return subset
    }
}

/// Who may call a method (declared per method, per call's params: `AuthMethod.access`).
public enum MethodAccess: Sendable, Equatable {
    /// Any door: what a tool on either side needs to use a session (`sign`, `token`, `refresh`…).
    case everyDoor
    /// Only the user's own host: what changes which sessions and providers exist (`logout`,
    /// `forget`, `setDefaultAccount`, learning an API with `login {resource}`).
    case hostOnly

    /// The refusal at `door`, or nil when allowed.
    func refusal(_ method: String, at door: Door) -> AuthError? {
        guard self == .hostOnly, door != .host else { return nil }
        return AuthError.notAllowed(method)
    }
}
