#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// How a `KeyringSessionStore` reaches its keyring.
///
/// `keyring` opens it at start (the agent refuses to start without it). `auto`
/// touches it only when a record names a keyring item or a write has to decide
/// where secrets go: a process that only reads records whose tokens are in
/// files never loads libsecret nor talks to D-Bus — the start-up of every git
/// and kubectl helper on a machine without a Secret Service.
final class KeyringAccess: Sendable {
    private enum Source: Sendable {
        case open(SecretStore)
        case onDemand(StoreOpening.Keyring, scope: String, clock: Clock)
    }

    private struct State {
        var secrets: SecretStore?
        /// Why the keyring did not answer, and when it was asked.
        var failure: (reason: String, at: Date)?
    }

    private let source: Source
    private let state = Locked(State())

    /// A keyring that did not answer is asked again after this many seconds (it may have started meanwhile).
    static let retryAfter = 60.0

    /// The keyring of an explicit `keyring` store, already known to answer.
    init(_ secrets: SecretStore) { source = .open(secrets) }

    /// `auto`'s keyring, asked whether it answers (`StoreOpening.probeTimeout`) at its first use.
    /// `clock`: when a keyring that did not answer may be asked again is judged on it.
    init(onDemand keyring: StoreOpening.Keyring, scope: String, clock: Clock) { source = .onDemand(keyring, scope: scope, clock: clock) }

    /// Whether writes may fall back to files (`auto`).
    var mayUseFiles: Bool {
        if case .onDemand = source { return true }
        return false
    }

    /// Whether the keyring is in use in this process (opened, or open from the start).
    var isOpen: Bool {
        if case .open = source { return true }
        return state.withLock { $0.secrets != nil }
    }

    /// Why the keyring last did not answer, if it did not.
    var failure: String? { state.withLock { $0.failure?.reason } }

    /// The keyring, or why it does not answer here. The probe runs outside the lock
    /// (it may take `StoreOpening.probeTimeout`); two threads probing at once both
    /// get a usable answer.
    func secrets() -> Result<SecretStore, KeyringUnreachable> {
        switch source {
        case .open(let secrets):
            return .success(secrets)
        case .onDemand(let keyring, let scope, let clock):
            let now = clock.now()
            let known: Result<SecretStore, KeyringUnreachable>? = state.withLock { s in
                if let secrets = s.secrets { return .success(secrets) }
                if let failure = s.failure, now.timeIntervalSince(failure.at) < Self.retryAfter {
                    return .failure(KeyringUnreachable(reason: failure.reason))
                }
                return nil
            }
            if let known { return known }
            if let reason = keyring.probe(StoreOpening.probeTimeout) {
                state.withLock { $0.failure = (reason, clock.now()) }
                return .failure(KeyringUnreachable(reason: reason))
            }
            let secrets = keyring.open(scope)
            state.withLock { s in
                if s.secrets == nil { s.secrets = secrets }
                s.failure = nil
            }
            return .success(state.withLock { $0.secrets! })
        }
    }
}

/// Why `auto`'s keyring cannot be used by this process.
struct KeyringUnreachable: Error {
    let reason: String
}
