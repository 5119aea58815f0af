/// A JSON value serialized once, for an answer repeated many times (the
/// `sign` result of a session is the same until the token changes).
public struct JSONText: Sendable, Equatable {
    public let bytes: [UInt8]

    public init(_ value: JSONValue) {
        bytes = JSONSerializer.bytes(value)
    }
}
