import JSON

/// The on-disk envelope of a session: `{"version":1,"session":{…}}`.
///
/// The version lets a later agent change the record and still recognise (and
/// set aside rather than misread) files in a format it does not know.
enum SessionFileFormat {
    static let version: Int64 = 1

    static func encode(_ session: Session) -> [UInt8] {
        encode(record: session.toJSON())
    }

    /// The envelope around any session record (the keyring store's records hold no tokens).
    static func encode(record: JSONValue) -> [UInt8] {
        var envelope = JSONObject()
        envelope["version"] = .int(version)
        envelope["session"] = record
        return JSONSerializer.bytes(.object(envelope)) + [UInt8(ascii: "\n")]
    }

    /// The `session` member of a valid envelope, not yet checked as a session.
    static func decodeRecord(_ bytes: [UInt8]) throws(SessionFormatError) -> JSONValue {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            throw SessionFormatError("not valid JSON (\(error.message) at byte \(error.offset))")
        }
        guard let envelope = value.objectValue else { throw SessionFormatError("the file holds \(value.kindName), not an object") }
        guard let v = envelope["version"] else { throw SessionFormatError("\"version\" is missing") }
        guard case .int(let number) = v, number == version else {
            throw SessionFormatError("unsupported version \(v.kindName == "a number" ? v.description : v.kindName)")
        }
        guard let session = envelope["session"] else { throw SessionFormatError("\"session\" is missing") }
        return session
    }
}
