import Locking

/// The providers of an `AuthService`: the configured ones, fixed at start, and the learned
/// ones, which come and go at run time (this process learns one, another process's shows up
/// in the store, `forget` removes one). Reads take a lock and copy two small collections.
final class ProviderRegistry: Sendable {
    struct State {
        var providers: [String: ProviderAccounts] = [:]
        var order: [String] = []
        /// The learned providers, checked before the configured origins: they cover a path prefix.
        var learned: [ProviderAccounts] = []
        /// `documentStamp` of `StoreKeys.learned` when it was last read.
        var stamp: String??
    }

    let state = Locked(State())

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

    /// The learned provider whose resource `url` lies under; nil at once when none was learned.
    func learnedCovering(_ url: String) -> ProviderAccounts? {
        let learned = state.withLock { $0.learned }
        guard !learned.isEmpty else { return nil }
        return learned.first { $0.config.learned?.covers(url) == true }
    }

    /// Adds a learned provider; false when its id is taken (by a configured provider, or already learned).
    @discardableResult
    func add(_ p: ProviderAccounts) -> Bool {
        state.withLock { s in
            guard s.providers[p.id] == nil else { return false }
            s.providers[p.id] = p
            s.order.append(p.id)
            s.learned.append(p)
            return true
        }
    }

    /// Removes a learned provider (never a configured one).
    func remove(_ id: String) {
        state.withLock { s in
            guard s.learned.contains(where: { $0.id == id }) else { return }
            s.learned.removeAll { $0.id == id }
            s.providers[id] = nil
            s.order.removeAll { $0 == id }
        }
    }

    var learnedIds: [String] { state.withLock { $0.learned.map(\.id) } }
}
