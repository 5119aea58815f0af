#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Locking
import Wire

/// Sessions with their secrets in an OS keyring and everything else in the
/// file store.
///
/// The per-provider 0600 file keeps the non-secret record (user, expiry,
/// generation) and, instead of tokens, `secretItem`: the name of the keyring
/// item holding them. The file keeps the `.lock`, the modification stamp and the
/// atomic writes, so locking, the cross-process watch and generation checks work
/// as with the file store. A save writes a new item (named after the
/// generation), then the record, then deletes the old item: a crash at any point
/// leaves a record whose item exists, and at worst a dangling item that
/// `prepare` deletes on the next start.
///
/// With `auto` the keyring is reached only when needed (`KeyringAccess`): a write
/// puts the tokens in the keyring if it answers, else in the record file with
/// `filesBecause` saying why; a read follows the record. A record naming a keyring
/// item that this process cannot reach is `unavailable` (1010), never set aside.
public final class KeyringSessionStore: SessionStore, StoreStatusReporting {
    public let records: FileSessionStore
    private let access: KeyringAccess
    private let warn: @Sendable (String) -> Void
    private let labels: [String: String]
    /// Why `auto` keeps tokens in files, by record key, as the records (or this process's writes) say; for `status`.
    private let filesBecause = Locked<[String: String]>([:])
    private let warnedOfFiles = Locked(false)

    /// The members of `Session.toJSON()` that go to the keyring.
    static let secretKeys = ["accessToken", "refreshToken", "idToken", "shaped", "dpopKey"]

    /// A `keyring` store: every secret in `secrets`.
    /// - Parameter labels: display names by provider id, for the items' labels.
    public convenience init(records: FileSessionStore, secrets: SecretStore, labels: [String: String] = [:],
                            warn: @escaping @Sendable (String) -> Void) {
        self.init(records: records, access: KeyringAccess(secrets), labels: labels, warn: warn)
    }

    init(records: FileSessionStore, access: KeyringAccess, labels: [String: String], warn: @escaping @Sendable (String) -> Void) {
        self.records = records
        self.access = access
        self.labels = labels
        self.warn = warn
    }

    /// `keyring`; for `auto`, what its records and writes showed (nothing stored yet: `auto`).
    public var storeStatus: StoreStatus {
        guard access.mayUseFiles else { return StoreStatus(kind: .keyring) }
        if let reason = filesBecause.current.sorted(by: { $0.key < $1.key }).first?.value { return StoreStatus(kind: .file, reason: reason) }
        if access.isOpen { return StoreStatus(kind: .keyring) }
        if let reason = access.failure { return StoreStatus(kind: .keyring, reason: "not readable here: \(reason)") }
        return StoreStatus(kind: .auto, reason: "nothing stored yet: a login keeps its tokens in the keyring if one answers, else in files")
    }

    private func read(_ key: String) throws -> StoredRecord? {
        let record = try records.loadRecord(key, decode: StoredRecord.decode)
        var reason: String?
        if case .plaintext(_, let why)? = record { reason = why }
        filesBecause.withLock { $0[key] = reason }
        return record
    }

    /// The keyring, to read or delete an item a record names.
    private func keyring() throws -> SecretStore {
        switch access.secrets() {
        case .success(let secrets): return secrets
        case .failure(let why): throw StoredRecord.heldInKeyring(why.reason)
        }
    }

    public func load(_ provider: String) throws -> Session? {
        // A record read just before another agent's save may name an item that
        // save has since deleted: read again while the record keeps changing.
        for _ in 0..<3 {
            guard let record = try read(provider) else { return nil }
            switch record {
            case .plaintext(let session, _):
                return session
            case .reference(let object, let item):
                if let secret = try keyring().read(provider: provider, item: item) {
                    return try Self.merge(object, secret)
                }
                if try read(provider)?.item == item {
                    warn("the keyring has no item \(item) for \(provider) (deleted outside auth-agent?); starting logged out")
                    return nil
                }
            }
        }
        throw SessionStoreError.unavailable("the session of \(provider) kept changing while it was read")
    }

    /// Where a save put the tokens.
    enum Placement { case keyring, files }

    /// Call with the provider's lock held (as every writer does).
    public func save(_ session: Session, for provider: String) throws {
        _ = try place(session, for: provider)
    }

    /// `save`, saying where the tokens went: the keyring if it answers; with
    /// `auto`, else the record file with the reason, warned of once per process
    /// when it is a new decision. An account held in the keyring stays there: a
    /// process that cannot reach it does not write its tokens to a file instead.
    private func place(_ session: Session, for provider: String) throws -> Placement {
        let old = (try? read(provider)) ?? nil
        switch access.secrets() {
        case .success(let secrets):
            try save(session, for: provider, in: secrets, replacing: old)
            filesBecause.withLock { $0[provider] = nil }
            return .keyring
        case .failure(let why):
            if old?.item != nil { throw StoredRecord.heldInKeyring(why.reason) }
            try records.saveRecord(StoredRecord.encode(session, filesBecause: why.reason), for: provider)
            filesBecause.withLock { $0[provider] = why.reason }
            var decidedBefore = false
            if case .plaintext(_, _?)? = old { decidedBefore = true }
            if !decidedBefore, warnedOfFiles.withLock({ warned in defer { warned = true }; return !warned }) {
                warn("\(why.reason); keeping sessions (tokens included) in files under \(records.path)")
            }
            return .files
        }
    }

    private func save(_ session: Session, for provider: String, in secrets: SecretStore, replacing old: StoredRecord?) throws {
        let item = "\(session.generation)-\(Base64URL.encode(SecureRandom.bytes(6)))"
        let (record, secret) = Self.split(session, item: item)
        try secrets.write(secret, provider: provider, item: item, label: Self.label(for: session, key: provider, labels: labels),
                          account: session.account)
        do {
            try records.saveRecord(SessionFileFormat.encode(record: .object(record)), for: provider)
        } catch {
            try? secrets.delete(provider: provider, item: item)
            throw error
        }
        if let previous = old?.item, previous != item { deleteQuietly(secrets, provider, previous) }
    }

    /// Removes the record first, so a crash leaves at most a dangling item. A record
    /// whose item this process cannot reach is kept (1010): its item would be orphaned.
    public func remove(_ provider: String) throws {
        let old = (try? read(provider)) ?? nil
        let secrets = try old?.item.map { _ in try keyring() }
        try records.remove(provider)
        filesBecause.withLock { $0[provider] = nil }
        if let item = old?.item, let secrets { deleteQuietly(secrets, provider, item) }
    }

    public func tryLock(_ provider: String) throws -> StoreLock? { try records.tryLock(provider) }

    public func modificationStamp(_ provider: String) -> String? { records.modificationStamp(provider) }

    /// The account list holds no secret: it stays in the record files.
    public func loadIndex(_ provider: String) throws -> AccountIndex? { try records.loadIndex(provider) }
    public func saveIndex(_ index: AccountIndex, for provider: String) throws { try records.saveIndex(index, for: provider) }
    public func indexStamp(_ provider: String) -> String? { records.indexStamp(provider) }
    /// Documents hold nothing secret: they stay in the record files.
    public func loadDocument(_ key: String) throws -> [UInt8]? { try records.loadDocument(key) }
    public func saveDocument(_ bytes: [UInt8]?, key: String) throws { try records.saveDocument(bytes, key: key) }
    public func documentStamp(_ key: String) -> String? { records.documentStamp(key) }

    /// Once at start, under each provider's lock: places tokens still kept in a
    /// record file that nobody decided about (an earlier version, a `file` store) —
    /// the keyring, or with `auto` and no keyring the file, noting why — and
    /// deletes items no record names (left by a crash between the writes of a
    /// save, or a failed delete). The record is rewritten only after its secret
    /// is stored, so a crash midway loses nothing. Failures are warnings.
    ///
    /// `auto` looks at the records first, without the lock: when every one of a
    /// provider's records has its tokens in a file by decision, it does nothing
    /// more, so such a start never reaches for the keyring.
    public func prepare(providers: [String], lockTimeout: Double) {
        for provider in providers {
            do {
                if access.mayUseFiles {
                    let keys = try keys(of: provider)
                    guard try keys.contains(where: { key in try read(key).map { $0.isUndecided || $0.item != nil } ?? false }) else { continue }
                }
                try withLock(provider, timeout: lockTimeout) {
                    for key in try keys(of: provider) { try tidy(key) }
                }
            } catch {
                warn("could not tidy the keyring items of \(provider): \(error)")
            }
        }
    }

    /// The provider's own key (a session from before accounts) and each account's.
    private func keys(of provider: String) throws -> [String] {
        [provider] + ((try records.loadIndex(provider))?.accounts ?? []).map { StoreKeys.account($0, of: provider) }
    }

    /// Places the tokens of one record that are in its file by nobody's decision (with
    /// `keyring`, any in its file) and deletes the items no record names.
    private func tidy(_ key: String) throws {
        let record = try read(key)
        if case .plaintext(var session, let reason)? = record, reason == nil || !access.mayUseFiles {
            session.generation += 1
            if try place(session, for: key) == .keyring {
                warn("moved the tokens of \(StoreKeys.provider(of: key)) from its session file into the keyring")
            }
        }
        // Where the keyring is in use: `keyring`, or `auto` once a record names an item (its read needs the keyring anyway).
        guard access.isOpen || record?.item != nil, case .success(let secrets) = access.secrets() else { return }
        let keep = try read(key)?.item
        for item in try secrets.items(provider: key) where item != keep {
            try secrets.delete(provider: key, item: item)
        }
    }

    private func deleteQuietly(_ secrets: SecretStore, _ provider: String, _ item: String) {
        do {
            try secrets.delete(provider: provider, item: item)
        } catch {
            warn("could not delete the old keyring item of \(provider) (deleted on a later start): \(error)")
        }
    }

    /// `auth-agent: <display name> (<account>)`: what the user sees in a keyring manager.
    static func label(for session: Session, key: String, labels: [String: String]) -> String {
        let provider = StoreKeys.provider(of: key)
        let name = labels[provider] ?? provider
        return session.account.map { "auth-agent: \(name) (\($0))" } ?? "auth-agent: \(name)"
    }

    /// The record (the session without its tokens, plus the item name) and the
    /// secret (the tokens, as a JSON object).
    static func split(_ session: Session, item: String) -> (JSONObject, String) {
        var record = session.toJSON().objectValue ?? [:]
        var secret = JSONObject()
        for key in secretKeys {
            if let value = record[key] { secret[key] = value }
            record[key] = nil
        }
        record[StoredRecord.itemKey] = .string(item)
        return (record, JSONSerializer.string(.object(secret)))
    }

    static func merge(_ record: JSONObject, _ secret: String) throws(SessionStoreError) -> Session {
        guard let tokens = (try? JSONParser.parse(secret))?.objectValue else {
            throw .io("the keyring item is not a JSON object")
        }
        var object = record
        object[StoredRecord.itemKey] = nil
        for key in secretKeys { object[key] = tokens[key] }
        do {
            return try Session(json: .object(object))
        } catch {
            throw .io("the session record with its keyring item is unreadable: \(error.problem)")
        }
    }
}
