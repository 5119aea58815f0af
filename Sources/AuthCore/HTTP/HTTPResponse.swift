/// What came back from an `HTTPTransport`: status, headers and the whole body.
///
/// Header names are lowercased so lookups need no case folding; repeated
/// headers arrive joined with `, ` as HTTP allows. The description leaves out
/// the body, which is where tokens are.
public struct HTTPResponse: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    public var status: Int
    public var headers: [String: String]
    public var body: [UInt8]

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = []) {
        self.status = status
        var lowered: [String: String] = [:]
        for (name, value) in headers {
            let key = name.lowercased()
            lowered[key] = lowered[key].map { "\($0), \(value)" } ?? value
        }
        self.headers = lowered
        self.body = body
    }

    public var description: String { "HTTP \(status) (\(body.count) bytes)" }

    public var debugDescription: String { description }
}
