#if canImport(SecretShim)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Locking
import SecretShim

/// The freedesktop Secret Service (GNOME Keyring, KeePassXC) through libsecret,
/// loaded on first use by `SecretShim`.
///
/// Items carry the attributes `application = auth-agent`, `provider` (the
/// provider's id), `account` (the account's id), `record` (the record key,
/// `<provider>+<hash>`, which the store looks items up by), `store` (the store
/// directory, so two stores never collide) and `item` (the generation-specific
/// name), in the default collection: `secret-tool search application auth-agent
/// provider corp account alice` finds an account's item. Items of the previous
/// version carry the record key as `provider` and no `record`: they are still
/// read, listed and deleted (the next save of the session replaces them).
public struct LibsecretStore: SecretStore {
    /// The `store` attribute: the directory of the records these secrets belong to.
    public let scope: String

    public init(scope: String) { self.scope = scope }

    /// nil when a Secret Service answers on the session bus within `timeout`
    /// seconds, else why not. The probe runs on its own thread, so a bus that
    /// never answers costs `timeout`, not a hang.
    public static func probe(timeout: Double) -> String? {
        let outcome = Locked<String??>(nil)
        let done = ThreadWait()
        let started = DetachedThread.start {
            var error: UnsafeMutablePointer<CChar>?
            let status = asecret_probe(Int32(timeout * 1000), &error)
            outcome.withLock { $0 = .some(status == Int32(ASECRET_OK) ? nil : text(error)) }
            asecret_free(error)
            done.wake()
        }
        guard started else { return "cannot start a thread to ask the Secret Service" }
        guard let result = done.wait(timeout: timeout + 0.2, until: { outcome.current }) else {
            return "no answer within \(timeout) s"
        }
        return result
    }

    public func write(_ secret: String, provider key: String, item: String, label: String, account: String?) throws {
        var attributes = ["application", "auth-agent", "provider", StoreKeys.provider(of: key), "record", key, "store", scope, "item", item]
        if let account { attributes += ["account", account] }
        try call(attributes) { attributes, error in asecret_store(attributes, label, secret, error) }
    }

    public func read(provider key: String, item: String) throws -> String? {
        for attributes in [current(key, item), previous(key, item)] {
            var secret: UnsafeMutablePointer<CChar>?
            defer { asecret_free(secret) }
            if try call(attributes, { attributes, error in asecret_lookup(attributes, &secret, error) }) {
                return secret.map { String(cString: $0) }
            }
        }
        return nil
    }

    public func delete(provider key: String, item: String) throws {
        for attributes in [current(key, item), previous(key, item)] {
            try call(attributes) { attributes, error in asecret_delete(attributes, error) }
        }
    }

    public func items(provider key: String) throws -> [String] {
        // The previous version's items have no `record`; a current item whose `provider`
        // equals this key (a session from before accounts is keyed by the provider's id) is not one.
        let searches = [(current(key, nil), nil), (previous(key, nil), "record")]
        var names: [String] = []
        for (attributes, unless) in searches {
            var values: UnsafeMutablePointer<CChar>?
            defer { asecret_free(values) }
            try call(attributes) { attributes, error in asecret_list(attributes, "item", unless, &values, error) }
            names += (values.map { String(cString: $0) } ?? "").split(separator: "\n").map(String.init)
        }
        return names
    }

    /// How this version finds an item (or, without `item`, every item of a record).
    private func current(_ key: String, _ item: String?) -> [String] {
        ["application", "auth-agent", "record", key, "store", scope] + (item.map { ["item", $0] } ?? [])
    }

    /// How the previous version named them: the record key as `provider`.
    private func previous(_ key: String, _ item: String?) -> [String] {
        ["application", "auth-agent", "provider", key, "store", scope] + (item.map { ["item", $0] } ?? [])
    }

    /// Runs one shim call with `pairs` (attribute names and values); true when
    /// found, false when no item matched, `SessionStoreError.unavailable` otherwise.
    @discardableResult
    private func call(_ pairs: [String],
                      _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32) throws -> Bool {
        let copies = pairs.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) } + [nil]
        var error: UnsafeMutablePointer<CChar>?
        defer { asecret_free(error) }
        let status = pointers.withUnsafeBufferPointer { body($0.baseAddress!, &error) }
        switch Int(status) {
        case Int(ASECRET_OK): return true
        case Int(ASECRET_NOT_FOUND): return false
        default: throw SessionStoreError.unavailable(Self.text(error))
        }
    }

    private static func text(_ error: UnsafeMutablePointer<CChar>?) -> String {
        error.map { String(cString: $0) } ?? "the Secret Service failed"
    }
}
#endif
