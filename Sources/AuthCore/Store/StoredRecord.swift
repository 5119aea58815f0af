import JSON

/// What an account's record file holds: its tokens (a `file` store, `auto`
/// without a keyring, an earlier version) or the name of the keyring item
/// holding them. Both stores read records through this, so a record that points
/// to the keyring is never mistaken for a corrupt one by a process that cannot
/// read the keyring.
enum StoredRecord {
    /// Tokens in the file. `filesBecause`: why `auto` chose files when it wrote
    /// them; nil when nobody chose (a `file` store, a version before this one).
    case plaintext(Session, filesBecause: String?)
    /// The session without its tokens, which are in the keyring item `item`.
    case reference(JSONObject, item: String)

    static let itemKey = "secretItem"
    static let reasonKey = "filesBecause"

    static func decode(_ bytes: [UInt8]) throws(SessionFormatError) -> StoredRecord {
        let value = try SessionFileFormat.decodeRecord(bytes)
        guard let object = value.objectValue, let reference = object[itemKey] else {
            let reason = value.objectValue?[reasonKey]?.stringValue
            return .plaintext(try Session(json: value), filesBecause: reason)
        }
        guard let item = reference.stringValue, !item.isEmpty else {
            throw SessionFormatError("\"\(itemKey)\" is not a keyring item name")
        }
        return .reference(object, item: item)
    }

    /// A record with the tokens, noting why `auto` put them in a file.
    static func encode(_ session: Session, filesBecause reason: String?) -> [UInt8] {
        guard let reason, case .object(var record) = session.toJSON() else { return SessionFileFormat.encode(session) }
        record[reasonKey] = .string(reason)
        return SessionFileFormat.encode(record: .object(record))
    }

    var item: String? {
        if case .reference(_, let item) = self { return item }
        return nil
    }

    /// A record whose tokens are in a file that no `auto` store has decided about.
    var isUndecided: Bool {
        if case .plaintext(_, nil) = self { return true }
        return false
    }

    /// What a process that cannot read the keyring says of an account held there.
    static func heldInKeyring(_ why: String) -> SessionStoreError {
        .unavailable("the session is held in the keyring, not readable here (\(why))")
    }
}
