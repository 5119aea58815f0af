#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
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
public final class KeyringSessionStore: SessionStore {
    public let records: FileSessionStore
    private let secrets: SecretStore
    private let warn: @Sendable (String) -> Void
    private let labels: [String: String]

    /// The members of `Session.toJSON()` that go to the keyring.
    static let secretKeys = ["accessToken", "refreshToken", "idToken", "shaped", "dpopKey"]
    static let itemKey = "secretItem"

    /// - Parameter labels: display names by provider id, for the items' labels.
    public init(records: FileSessionStore, secrets: SecretStore, labels: [String: String] = [:],
                warn: @escaping @Sendable (String) -> Void) {
        self.records = records
        self.secrets = secrets
        self.labels = labels
        self.warn = warn
    }

    /// What a record file holds: tokens (the file store's format, from an earlier
    /// version or a `file` store) or a reference to a keyring item.
    enum Record {
        case plaintext(Session)
        case reference(JSONObject, item: String)

        static func decode(_ bytes: [UInt8]) throws(SessionFormatError) -> Record {
            let value = try SessionFileFormat.decodeRecord(bytes)
            guard let object = value.objectValue, let reference = object[KeyringSessionStore.itemKey] else {
                return .plaintext(try Session(json: value))
            }
            guard let item = reference.stringValue, !item.isEmpty else {
                throw SessionFormatError("\"\(KeyringSessionStore.itemKey)\" is not a keyring item name")
            }
            return .reference(object, item: item)
        }

        var item: String? {
            if case .reference(_, let item) = self { return item }
            return nil
        }
    }

    public func load(_ provider: String) throws -> Session? {
        // A record read just before another agent's save may name an item that
        // save has since deleted: read again while the record keeps changing.
        for _ in 0..<3 {
            guard let record = try records.loadRecord(provider, decode: Record.decode) else { return nil }
            switch record {
            case .plaintext(let session):
                return session
            case .reference(let object, let item):
                if let secret = try secrets.read(provider: provider, item: item) {
                    return try Self.merge(object, secret)
                }
                if try records.loadRecord(provider, decode: Record.decode)?.item == item {
                    warn("the keyring has no item \(item) for \(provider) (deleted outside auth-agent?); starting logged out")
                    return nil
                }
            }
        }
        throw SessionStoreError.unavailable("the session of \(provider) kept changing while it was read")
    }

    /// Call with the provider's lock held (as every writer does).
    public func save(_ session: Session, for provider: String) throws {
        let old = (try? records.loadRecord(provider, decode: Record.decode)) ?? nil
        let item = "\(session.generation)-\(Base64URL.encode(SecureRandom.bytes(6)))"
        let (record, secret) = Self.split(session, item: item)
        try secrets.write(secret, provider: provider, item: item, label: Self.label(for: session, key: provider, labels: labels))
        do {
            try records.saveRecord(SessionFileFormat.encode(record: .object(record)), for: provider)
        } catch {
            try? secrets.delete(provider: provider, item: item)
            throw error
        }
        if let previous = old?.item, previous != item { deleteQuietly(provider, previous) }
    }

    /// Removes the record first, so a crash leaves at most a dangling item.
    public func remove(_ provider: String) throws {
        let old = (try? records.loadRecord(provider, decode: Record.decode)) ?? nil
        try records.remove(provider)
        if let item = old?.item { deleteQuietly(provider, item) }
    }

    public func tryLock(_ provider: String) throws -> StoreLock? { try records.tryLock(provider) }

    public func modificationStamp(_ provider: String) -> String? { records.modificationStamp(provider) }

    /// The account list holds no secret: it stays in the record files.
    public func loadIndex(_ provider: String) throws -> AccountIndex? { try records.loadIndex(provider) }
    public func saveIndex(_ index: AccountIndex, for provider: String) throws { try records.saveIndex(index, for: provider) }
    public func indexStamp(_ provider: String) -> String? { records.indexStamp(provider) }

    /// Once at start, under each provider's lock: moves tokens still kept in a
    /// record file (an earlier version, a `file` store) into the keyring, and
    /// deletes items no record names (left by a crash between the writes of a
    /// save, or a failed delete). The record is rewritten only after its secret
    /// is stored, so a crash midway loses nothing. Failures are warnings.
    public func prepare(providers: [String], lockTimeout: Double) {
        for provider in providers {
            do {
                try withLock(provider, timeout: lockTimeout) {
                    // The provider's own key (a session from before accounts) and each account's.
                    let accounts = (try records.loadIndex(provider))?.accounts ?? []
                    for key in [provider] + accounts.map({ StoreKeys.account($0, of: provider) }) {
                        try tidy(key)
                    }
                }
            } catch {
                warn("could not tidy the keyring items of \(provider): \(error)")
            }
        }
    }

    /// Moves plaintext tokens of one record into the keyring and deletes the items no record names.
    private func tidy(_ key: String) throws {
        let record = try records.loadRecord(key, decode: Record.decode)
        if case .plaintext(var session)? = record {
            session.generation += 1
            try save(session, for: key)
            warn("moved the tokens of \(StoreKeys.provider(of: key)) from its session file into the keyring")
        }
        let keep = try records.loadRecord(key, decode: Record.decode)?.item
        for item in try secrets.items(provider: key) where item != keep {
            try secrets.delete(provider: key, item: item)
        }
    }

    private func deleteQuietly(_ provider: String, _ item: String) {
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
        record[itemKey] = .string(item)
        return (record, JSONSerializer.string(.object(secret)))
    }

    static func merge(_ record: JSONObject, _ secret: String) throws(SessionStoreError) -> Session {
        guard let tokens = (try? JSONParser.parse(secret))?.objectValue else {
            throw .io("the keyring item is not a JSON object")
        }
        var object = record
        object[itemKey] = nil
        for key in secretKeys { object[key] = tokens[key] }
        do {
            return try Session(json: .object(object))
        } catch {
            throw .io("the session record with its keyring item is unreadable: \(error.problem)")
        }
    }
}
