/// Where a request to a URL goes: the provider whose token it gets, and the token shape
/// its origin is configured with. What `sign`, `fetch`, the ordering of requests and the
/// command line's credential helpers all go by, so none can disagree on who covers a URL.
public struct Route: Sendable {
    let accounts: ProviderAccounts
    /// The shape configured for the URL's origin (`.none` for a learned provider's resource).
    public let shape: TokenShape

    public var provider: String { accounts.id }
}

/// The one place a URL is routed: the origin cache, the configured origins, the learned
/// providers' path prefixes (`PathCoverage`) and the check of a provider a request names.
///
/// A token is only ever attached over https, or to loopback. Configured providers cover
/// whole origins and are fixed at start, so their answer is cached per origin; learned
/// providers cover a path prefix and come and go at run time, so they are asked of the
/// registry on every call (one lock and an empty-array check when none was learned).
final class Router: Sendable {
    /// What an origin resolves to, cached: a class, so a cache hit costs one retain.
    private final class Covering: Sendable {
        let origin: Origin?
        let accounts: ProviderAccounts?
        let shape: TokenShape
        init(origin: Origin?, accounts: ProviderAccounts?, shape: TokenShape) {
            self.origin = origin
            self.accounts = accounts
            self.shape = shape
        }
    }

    private let registry: ProviderRegistry
    /// Where the origins of recently signed URLs go.
    private let origins: OriginCache<Covering>

    /// `registry` holds the configured providers (whose origins are read once, here) and,
    /// later, the learned ones.
    init(registry: ProviderRegistry) {
        self.registry = registry
        let configured = registry.providers
        let matcher = OriginMatcher(registry.order.compactMap { configured[$0] }.map { (provider: $0.id, origins: $0.config.origins) })
        origins = OriginCache { origin in
            let accounts = origin.flatMap { $0.isSecureForBearer ? matcher.provider(for: $0) : nil }.flatMap { configured[$0] }
            return Covering(origin: origin, accounts: accounts, shape: origin.flatMap { accounts?.config.shape(for: $0) } ?? .none)
        }
    }

    /// The route of a request to `url`; nil when no provider covers it. `explicit`, a
    /// provider the request names, must exist (else 1002) and cover the URL (else 1006).
    func route(url: String, provider explicit: String?) throws(AuthError) -> Route? {
        let found = origins.value(for: url)
        // A learned provider covers path prefixes of its resource, over https or loopback only (checked when learned).
        let learned = try registry.learnedCovering(url, origin: found.origin)
        if let explicit {
            let p = try registry.accounts(explicit)
            guard found.accounts === p || learned === p else { throw AuthError.notCovering(explicit, found.origin) }
            return Route(accounts: p, shape: found.shape)
        }
        if let learned { return Route(accounts: learned, shape: .none) }
        return found.accounts.map { Route(accounts: $0, shape: found.shape) }
    }

    /// How many origins were resolved rather than found in the cache: a URL's path, query
    /// or fragment must never cost a new resolution (issue 21).
    var originsResolved: Int { origins.resolved }

    /// The provider a request to `url` is ordered by: `explicit` when given, else the one
    /// covering it; nil when none does. Never throws: a bad request is refused by the
    /// operation itself.
    func provider(forURL url: String, explicit: String?) -> String? {
        if let explicit { return explicit }
        return (try? route(url: url, provider: nil))??.provider
    }
}
