#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Builds the session store a configuration asks for, and the `status.store` to report.
public enum StoreOpening {
    /// How to reach the OS keyring; tests substitute a fake.
    public struct Keyring: Sendable {
        /// nil when the keyring answers within `timeout` seconds, else why not.
        public let probe: @Sendable (_ timeout: Double) -> String?
        /// The keyring for the store whose records live in `scope` (a directory).
        public let open: @Sendable (_ scope: String) -> SecretStore

        public init(probe: @escaping @Sendable (Double) -> String?, open: @escaping @Sendable (String) -> SecretStore) {
            self.probe = probe
            self.open = open
        }

        /// The Secret Service through libsecret on Linux, the Keychain on macOS, none elsewhere.
        public static var system: Keyring {
            #if canImport(Security)
            return Keyring(probe: { _ in nil }, open: { KeychainStore(scope: $0) })
            #elseif canImport(SecretShim)
            return Keyring(probe: { timeout in LibsecretStore.probe(timeout: timeout).map { "no Secret Service on the session bus: \($0)" } },
                           open: { LibsecretStore(scope: $0) })
            #else
            return Keyring(probe: { _ in "no keyring support on this platform" }, open: { _ in fatalError("no keyring") })
            #endif
        }
    }

    /// How long `auto` waits for the keyring to answer before choosing files.
    public static let probeTimeout = 1.0

    /// `auto` opens no keyring here: it asks for one when a record needs it or a
    /// login decides where its tokens go (see `KeyringAccess`).
    /// - Throws: `SessionStoreError` when the directory cannot be used, or `keyring`
    ///   was asked for and does not answer (the agent exits 2 with that reason).
    /// - Parameter clock: for `auto`, when a keyring that did not answer is asked again (`KeyringAccess.retryAfter`).
    public static func open(_ config: StoreConfig, providers: [ProviderConfig], environment: [String: String],
                            lockTimeout: Double, keyring: Keyring = .system, clock: Clock = SystemClock(),
                            warn: @escaping @Sendable (String) -> Void) throws -> (SessionStore, StoreStatus) {
        func directory(_ path: String?) -> String {
            path.map(FileSessionStore.directoryPath) ?? FileSessionStore.defaultDirectoryPath(environment: environment)
        }
        switch config {
        case .memory:
            return (MemorySessionStore(), StoreStatus(kind: .memory))
        case .file(let path):
            return (try FileSessionStore(path: directory(path), warn: warn), StoreStatus(kind: .file))
        case .keyring(let path):
            if let reason = keyring.probe(probeTimeout) { throw SessionStoreError.unavailable(reason) }
            let records = try FileSessionStore(path: directory(path), warn: warn)
            let store = keyringStore(records, KeyringAccess(keyring.open(records.path)), providers, lockTimeout, warn)
            return (store, store.storeStatus)
        case .auto(let path):
            let records = try FileSessionStore(path: directory(path), warn: warn)
            let store = keyringStore(records, KeyringAccess(onDemand: keyring, scope: records.path, clock: clock), providers, lockTimeout, warn)
            return (store, store.storeStatus)
        }
    }

    private static func keyringStore(_ records: FileSessionStore, _ access: KeyringAccess, _ providers: [ProviderConfig], _ lockTimeout: Double,
                                     _ warn: @escaping @Sendable (String) -> Void) -> KeyringSessionStore {
        let labels = Dictionary(providers.map { ($0.id, $0.displayName) }, uniquingKeysWith: { first, _ in first })
        let store = KeyringSessionStore(records: records, access: access, labels: labels, warn: warn)
        store.prepare(providers: providers.map(\.id), lockTimeout: lockTimeout)
        return store
    }
}
