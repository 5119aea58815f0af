/// An OS keyring as `KeyringSessionStore` uses it: small text secrets, each an
/// item named by record key (`provider`: `<provider>+<hash>`, see `StoreKeys`)
/// and item name within one store's scope.
///
/// Every failure is `SessionStoreError.unavailable` with what the keyring said
/// (locked, not answering), so callers can keep the session and answer 1010.
/// Names and labels are never secret; only `secret` is.
public protocol SecretStore: Sendable {
    /// Creates (or replaces) the item; `label` is what a keyring UI shows, `account`
    /// the account whose tokens these are (an attribute to search by; nil for a
    /// session from before accounts).
    func write(_ secret: String, provider: String, item: String, label: String, account: String?) throws
    /// The item's secret, or nil when there is no such item.
    func read(provider: String, item: String) throws -> String?
    /// Deletes the item; not an error when there is none.
    func delete(provider: String, item: String) throws
    /// The names of the items held for `provider`.
    func items(provider: String) throws -> [String]
}
