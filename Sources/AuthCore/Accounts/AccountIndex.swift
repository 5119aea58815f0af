import Digest
import JSON

/// A provider's accounts as the store keeps them: which are logged in (in
/// login order) and which one is the default. One small record per provider,
/// beside one session record per account, written under the provider's lock.
public struct AccountIndex: Sendable, Equatable {
    public var accounts: [String]
    /// The account used when a request names none and its connection selected none.
    public var defaultAccount: String?

    public init(accounts: [String] = [], defaultAccount: String? = nil) {
        self.accounts = accounts
        self.defaultAccount = defaultAccount
    }

    /// Adds `account` if new; the first account becomes the default.
    mutating func add(_ account: String) {
        if !accounts.contains(account) { accounts.append(account) }
        if defaultAccount == nil || !accounts.contains(defaultAccount!) { defaultAccount = account }
    }

    /// Removes `account`; if it was the default, the earliest remaining one is.
    mutating func remove(_ account: String) {
        accounts.removeAll { $0 == account }
        if defaultAccount == account || defaultAccount.map({ !accounts.contains($0) }) == true { defaultAccount = accounts.first }
    }

    static let version: Int64 = 1

    func encoded() -> [UInt8] {
        var o: JSONObject = ["version": .int(Self.version), "accounts": .array(accounts.map { .string($0) })]
        if let defaultAccount { o["default"] = .string(defaultAccount) }
        return JSONSerializer.bytes(.object(o)) + [UInt8(ascii: "\n")]
    }

    static func decode(_ bytes: [UInt8]) throws(SessionFormatError) -> AccountIndex {
        guard let o = (try? JSONParser.parse(bytes))?.objectValue else { throw SessionFormatError("the account list is not a JSON object") }
        guard case .int(version)? = o["version"] else { throw SessionFormatError("unsupported account list version") }
        guard case .array(let items)? = o["accounts"] else { throw SessionFormatError("\"accounts\" is not an array") }
        let accounts = items.compactMap(\.stringValue)
        guard accounts.count == items.count else { throw SessionFormatError("\"accounts\" holds something other than strings") }
        return AccountIndex(accounts: accounts, defaultAccount: o["default"]?.stringValue)
    }
}

/// The store keys of a provider's records. Provider ids match `[a-z0-9._-]+`,
/// so a `+` never appears in one and these keys cannot collide with a provider's
/// own key (which holds a session written before accounts existed).
public enum StoreKeys {
    /// The key of one account's session: the account id hashed, so that any id the
    /// server chose makes a short file name that case-insensitive file systems keep apart.
    public static func account(_ account: String, of provider: String) -> String {
        let digest = SHA256.hash(account).prefix(16)
        let hex = digest.map { byte in String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16) }.joined()
        return "\(provider)+\(hex)"
    }

    /// The key of the provider's `AccountIndex`.
    public static func index(of provider: String) -> String { "\(provider)+accounts" }

    /// The provider a key belongs to, for messages and labels.
    public static func provider(of key: String) -> String { String(key.prefix { $0 != "+" }) }
}
