#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Digest
import JSON
import Wire

/// A provider's accounts as the store keeps them: which are logged in (in
/// login order) and which one is the default. One small record per provider,
/// beside one session record per account, written under the provider's lock.
public struct AccountIndex: Sendable, Equatable {
    public var accounts: [String]
    /// The account used when a request names none and its connection selected none.
    public var defaultAccount: String?
    /// When the recent refreshes of each account's tokens (by `tokenKey`) were sent, by any
    /// agent process: the refresh limit counts them here, under the provider's lock, because
    /// a helper such as `git-credential` is a new process per request and would otherwise
    /// count from zero every time. Pruned to the limit's window at every refresh.
    public var refreshes: [String: [String: [Date]]]

    public init(accounts: [String] = [], defaultAccount: String? = nil, refreshes: [String: [String: [Date]]] = [:]) {
        self.accounts = accounts
        self.defaultAccount = defaultAccount
        self.refreshes = refreshes
    }

    /// Adds `account` if new; the first account becomes the default.
    mutating func add(_ account: String) {
        if !accounts.contains(account) { accounts.append(account) }
        if defaultAccount == nil || !accounts.contains(defaultAccount!) { defaultAccount = account }
    }

    /// Removes `account`; if it was the default, the earliest remaining one is.
    mutating func remove(_ account: String) {
        accounts.removeAll { $0 == account }
        refreshes[account] = nil
        if defaultAccount == account || defaultAccount.map({ !accounts.contains($0) }) == true { defaultAccount = accounts.first }
    }

    /// Counts a refresh of `account`'s token of `shape` about to be sent at `now`, or says which
    /// `RefreshLimit` it would exceed (and counts nothing). The whole history is pruned to the
    /// window; times over a second in the future (a clock set back) are dropped, so they cannot
    /// block refreshes until the clock catches up.
    mutating func admitRefresh(of account: String, shape: TokenShape, at now: Date) -> RefreshLimit.Exceeded? {
        refreshes = refreshes.compactMapValues { tokens in
            let kept = tokens.compactMapValues { times in
                let recent = times.filter { time in
                    let age = now.timeIntervalSince(time)
                    return age > -1 && age < RefreshLimit.window
                }
                return recent.isEmpty ? nil : recent
            }
            return kept.isEmpty ? nil : kept
        }
        let token = Self.tokenKey(shape)
        let mine = refreshes[account] ?? [:]
        if mine[token]?.count ?? 0 >= RefreshLimit.perToken { return .token }
        if mine.values.reduce(0, { $0 + $1.count }) >= RefreshLimit.perAccount { return .account }
        refreshes[account, default: [:]][token, default: []].append(now)
        return nil
    }

    /// How a token is named in `refreshes`: `""` for the account's own, else its shape's
    /// form parameters (`scope=read&audience=…`), which tell shapes apart as the server does.
    static func tokenKey(_ shape: TokenShape) -> String { FormEncoding.queryString(shape.formPairs) }

    static let version: Int64 = 1

    func encoded() -> [UInt8] {
        var o: JSONObject = ["version": .int(Self.version), "accounts": .array(accounts.map { .string($0) })]
        if let defaultAccount { o["default"] = .string(defaultAccount) }
        if !refreshes.isEmpty {
            var accounts = JSONObject()
            for (account, tokens) in refreshes.sorted(by: { $0.key < $1.key }) {
                var times = JSONObject()
                for (token, dates) in tokens.sorted(by: { $0.key < $1.key }) {
                    times[token] = .array(dates.map { .int(Int64(($0.timeIntervalSince1970 * 1000).rounded())) })
                }
                accounts[account] = .object(times)
            }
            o["refreshes"] = .object(accounts)
        }
        return JSONSerializer.bytes(.object(o)) + [UInt8(ascii: "\n")]
    }

    static func decode(_ bytes: [UInt8]) throws(SessionFormatError) -> AccountIndex {
        guard let o = (try? JSONParser.parse(bytes))?.objectValue else { throw SessionFormatError("the account list is not a JSON object") }
        guard case .int(version)? = o["version"] else { throw SessionFormatError("unsupported account list version") }
        guard case .array(let items)? = o["accounts"] else { throw SessionFormatError("\"accounts\" is not an array") }
        let accounts = items.compactMap(\.stringValue)
        guard accounts.count == items.count else { throw SessionFormatError("\"accounts\" holds something other than strings") }
        return AccountIndex(accounts: accounts, defaultAccount: o["default"]?.stringValue, refreshes: refreshes(in: o["refreshes"]))
    }

    /// The refresh times in milliseconds since 1970, per account and token; anything else there
    /// is ignored rather than setting the account list aside: it is bookkeeping, written again
    /// at the next refresh.
    private static func refreshes(in value: JSONValue?) -> [String: [String: [Date]]] {
        var refreshes: [String: [String: [Date]]] = [:]
        for (account, tokens) in value?.objectValue?.members ?? JSONObject().members {
            for (token, list) in tokens.objectValue?.members ?? JSONObject().members {
                let times = (list.arrayValue ?? []).compactMap { item -> Date? in
                    guard case .int(let ms) = item else { return nil }
                    return Date(timeIntervalSince1970: Double(ms) / 1000)
                }
                if !times.isEmpty { refreshes[account, default: [:]][token] = times }
            }
        }
        return refreshes
    }
}

/// How often a token may be refreshed, by all agent processes on the store together: a
/// guard against refresh storms (a host or helper retrying a token the server keeps
/// refusing), each of which would spend and rotate the refresh token. Per token, so that
/// every shape gets its own budget; per account too, so that a caller asking for ever new
/// shapes cannot go round it.
enum RefreshLimit {
    static let perToken = 5
    static let perAccount = 20
    static let window: TimeInterval = 30

    enum Exceeded {
        case token, account

        func message(_ displayName: String, account: String) -> String {
            switch self {
            case .token:
                return "\(displayName) was refreshed \(perToken) times within \(Int(window)) s; not calling the server again yet."
            case .account:
                return "\(displayName) (\(account)) was refreshed \(perAccount) times within \(Int(window)) s, counting all its token shapes; not calling the server again yet."
            }
        }
    }
}

/// The store keys of a provider's records. Provider ids match `[a-z0-9._-]+`,
/// so a `+` never appears in one and these keys cannot collide with a provider's
/// own key (which holds a session written before accounts existed).
public enum StoreKeys {
    /// The key of one account's session: the account id hashed, so that any id the
    /// server chose makes a short file name that case-insensitive file systems keep apart.
    public static func account(_ account: String, of provider: String) -> String {
        // Hex by hand into bytes: `[String].joined()` looked its generic witnesses up by mangled
        // name, scanning every conformance of the binary — a tenth of a helper's own start-up.
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(32)
        for byte in SHA256.hash(account).prefix(16) {
            hex.append(digits[Int(byte >> 4)])
            hex.append(digits[Int(byte & 0x0F)])
        }
        return provider + "+" + String(decoding: hex, as: UTF8.self)
    }

    /// The key of the provider's `AccountIndex`.
    public static func index(of provider: String) -> String { "\(provider)+accounts" }

    /// The document of learned APIs and their client registrations; no provider id has a `+`.
    public static let learned = "+learned"

    /// The provider a key belongs to, for messages and labels.
    public static func provider(of key: String) -> String { String(key.prefix { $0 != "+" }) }
}
