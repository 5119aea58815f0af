#if canImport(SecretShim)
import Dispatch
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
/// Items carry the attributes `application = auth-agent`, `provider`, `store`
/// (the store directory, so two stores never collide) and `item` (the
/// generation-specific name), in the default collection.
public struct LibsecretStore: SecretStore {
    /// The `store` attribute: the directory of the records these secrets belong to.
    public let scope: String

    public init(scope: String) { self.scope = scope }

    /// nil when a Secret Service answers on the session bus within `timeout`
    /// seconds, else why not. The probe runs on its own thread, so a bus that
    /// never answers costs `timeout`, not a hang.
    public static func probe(timeout: Double) -> String? {
        let outcome = Locked<String??>(nil)
        let done = DispatchSemaphore(value: 0)
        let started = DetachedThread.start {
            var error: UnsafeMutablePointer<CChar>?
            let status = asecret_probe(Int32(timeout * 1000), &error)
            outcome.withLock { $0 = .some(status == Int32(ASECRET_OK) ? nil : text(error)) }
            asecret_free(error)
            done.signal()
        }
        guard started else { return "cannot start a thread to ask the Secret Service" }
        guard done.wait(timeout: .now() + timeout + 0.2) == .success, let result = outcome.current else {
            return "no answer within \(timeout) s"
        }
        return result
    }

    public func write(_ secret: String, provider: String, item: String, label: String) throws {
        try call(provider, item) { attributes, error in asecret_store(attributes, label, secret, error) }
    }

    public func read(provider: String, item: String) throws -> String? {
        var secret: UnsafeMutablePointer<CChar>?
        defer { asecret_free(secret) }
        let found = try call(provider, item) { attributes, error in asecret_lookup(attributes, &secret, error) }
        return found ? secret.map { String(cString: $0) } : nil
    }

    public func delete(provider: String, item: String) throws {
        try call(provider, item) { attributes, error in asecret_delete(attributes, error) }
    }

    public func items(provider: String) throws -> [String] {
        var values: UnsafeMutablePointer<CChar>?
        defer { asecret_free(values) }
        try call(provider, nil) { attributes, error in asecret_list(attributes, "item", &values, error) }
        return (values.map { String(cString: $0) } ?? "").split(separator: "\n").map(String.init)
    }

    /// Runs one shim call with the item's attributes; true when found, false when
    /// no item matched, `SessionStoreError.unavailable` otherwise.
    @discardableResult
    private func call(_ provider: String, _ item: String?,
                      _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32) throws -> Bool {
        var pairs = ["application", "auth-agent", "provider", provider, "store", scope]
        if let item { pairs += ["item", item] }
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
