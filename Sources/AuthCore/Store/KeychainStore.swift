#if canImport(Security)
import Foundation
import Security

/// The macOS Keychain: generic passwords of service `auth-agent`, account
/// `<provider>/<item>` (one item per generation, like the Secret Service
/// items), the store directory as the comment, accessible after first unlock,
/// this device only. Compiled, never run here: no Mac is available to test it.
public struct KeychainStore: SecretStore {
    public let scope: String

    public init(scope: String) { self.scope = scope }

    public func write(_ secret: String, provider: String, item: String, label: String, account: String?) throws {
        try delete(provider: provider, item: item)
        var attributes = query(provider, item)
        attributes[kSecAttrLabel as String] = label
        attributes[kSecAttrComment as String] = scope
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        attributes[kSecValueData as String] = Data(secret.utf8)
        try check(SecItemAdd(attributes as CFDictionary, nil))
    }

    public func read(provider: String, item: String) throws -> String? {
        var q = query(provider, item)
        q[kSecReturnData as String] = true
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        try check(status)
        return (result as? Data).flatMap { String(data: $0, encoding: .utf8) }
    }

    public func delete(provider: String, item: String) throws {
        let status = SecItemDelete(query(provider, item) as CFDictionary)
        if status != errSecItemNotFound { try check(status) }
    }

    public func items(provider: String) throws -> [String] {
        let q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "auth-agent",
                                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
        var result: CFTypeRef?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        try check(status)
        let prefix = "\(provider)/"
        return ((result as? [[String: Any]]) ?? []).compactMap { found in
            guard found[kSecAttrComment as String] as? String == scope,
                  let account = found[kSecAttrAccount as String] as? String, account.hasPrefix(prefix) else { return nil }
            return String(account.dropFirst(prefix.count))
        }
    }

    private func query(_ provider: String, _ item: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "auth-agent",
         kSecAttrAccount as String: "\(provider)/\(item)"]
    }

    private func check(_ status: OSStatus) throws {
        guard status != errSecSuccess else { return }
        let text = SecCopyErrorMessageString(status, nil) as String? ?? "OSStatus \(status)"
        throw SessionStoreError.unavailable(text)
    }
}
#endif
