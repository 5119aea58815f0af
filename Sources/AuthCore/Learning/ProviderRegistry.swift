import Locking

/// The providers of an `AuthService`: the configured ones, fixed at start, and the learned
/// ones, which come and go at run time (this process learns one, another process's shows up
/// in the store, `forget` removes one). Reads take a lock and copy two small collections.
final class ProviderRegistry: Sendable {
    struct State {
        var providers: [String: ProviderAccounts] = [:]
        var order: [String] = []
        /// The learned providers, checked before the configured origins: they cover a path prefix.
        var learned: [Entry] = []
        /// `documentStamp` of `StoreKeys.learned` when it was last read.
        var stamp: String??
    }

    let state = Locked(State())
    /// `state.learned.count`, stored under the lock whenever it changes: routing reads it first,
    /// so a `sign` takes no lock for learned providers while none is learned.
    private let learnedCount = AtomicCount()
    /// Learning under way in this process, by the origin of the URL it started from: a second
    /// request for the same API waits for that login instead of starting its own.
    let flights = Locked<[Origin: Task<LoginResult, Error>]>([:])

    /// A learned provider with the origin and path prefixes it covers worked out once, so that
    /// routing a URL costs an origin comparison and a scan of its path (`PathCoverage`).
    struct Entry {
        let origin: Origin
        /// The covered paths without a trailing `/` (empty for the root).
        let prefixes: [[UInt8]]
        let accounts: ProviderAccounts
    }

    init(_ configured: [ProviderAccounts]) {
        state.withLock { s in
            for p in configured {
                s.providers[p.id] = p
                s.order.append(p.id)
            }
        }
    }

    var providers: [String: ProviderAccounts] { state.withLock { $0.providers } }
    var order: [String] { state.withLock { $0.order } }

    /// The provider `id` names; 1002 listing the known ones otherwise.
    func accounts(_ id: String) throws(AuthError) -> ProviderAccounts {
        let (found, known) = state.withLock { s in (s.providers[id], s.providers[id] == nil ? s.order : []) }
        guard let found else { throw AuthError.unknownProvider(id, .notConfigured(known: known)) }
        return found
    }

    /// The learned provider that covers `url` (of `origin`, already parsed by the caller's
    /// cache); nil at once when none was learned. A URL whose path would be covered but encodes
    /// a dot, slash or backslash is refused (1006): where it goes is the server's guess.
    func learnedCovering(_ url: String, origin: Origin?) throws(AuthError) -> ProviderAccounts? {
        guard learnedCount.load() > 0 else { return nil }
        let learned = state.withLock { $0.learned }
        guard !learned.isEmpty, let origin else { return nil }
        for entry in learned where entry.origin == origin {
            switch PathCoverage.verdict(url, prefixes: entry.prefixes) {
            case .covered: return entry.accounts
            case .outside: continue
            case .ambiguous: throw AuthError.ambiguousPath(entry.accounts.id)
            }
        }
        return nil
    }

    func learnedCovering(_ url: String) throws(AuthError) -> ProviderAccounts? { try learnedCovering(url, origin: Origin(url: url)) }

    /// Adds a learned provider, or puts it in the place of the learned one with its id (a
    /// step-up, wider coverage) in the same step, so no request finds the id missing meanwhile.
    /// True when it was added; false when it replaced one, or the id is a configured provider's.
    @discardableResult
    func put(_ p: ProviderAccounts) -> Bool {
        state.withLock { s in
            guard let learned = p.config.learned, let origin = Origin(url: learned.resource) else { return false }
            let entry = Entry(origin: origin, prefixes: learned.coverage.map(PathCoverage.prefix(of:)), accounts: p)
            if let i = s.learned.firstIndex(where: { $0.accounts.id == p.id }) {
                s.learned[i] = entry
                s.providers[p.id] = p
                return false
            }
            guard s.providers[p.id] == nil else { return false }
            s.providers[p.id] = p
            s.order.append(p.id)
            s.learned.append(entry)
            learnedCount.store(s.learned.count)
            return true
        }
    }

    /// Removes a learned provider (never a configured one); false when there was none, so
    /// that of two racing removals (`forget`, `checkLearned`) only one announces it.
    @discardableResult
    func remove(_ id: String) -> Bool {
        state.withLock { s in
            guard s.learned.contains(where: { $0.accounts.id == id }) else { return false }
            s.learned.removeAll { $0.accounts.id == id }
            learnedCount.store(s.learned.count)
            s.providers[id] = nil
            s.order.removeAll { $0 == id }
            return true
        }
    }

    var learnedIds: [String] { state.withLock { $0.learned.map(\.accounts.id) } }
}
