/// One server-sent event (WHATWG HTML §9.2): its `data` lines joined with LF.
public struct SSEEvent: Sendable, Equatable {
    public var event: String
    public var data: [UInt8]
    /// The `id` field, when this event set one.
    public var id: String?
}

/// The `text/event-stream` reader of MCP's Streamable HTTP answers, fed the body piece by
/// piece as it arrives so each event is handed on at once (a progress notification must
/// not wait for the tool's result).
///
/// Lines end at CRLF, LF or CR — a CR at the end of one piece may be the first half of a
/// CRLF, which the next piece settles. An event that grows past `maxEventBytes` without
/// ending is a malformed stream: nothing sane sends one, and keeping it would let a server
/// grow the bridge without bound.
public struct SSEParser: Sendable {
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    public let maxEventBytes: Int
    /// The last event id seen (kept across events, as the spec says), for `Last-Event-ID`.
    public private(set) var lastEventId: String?
    /// The reconnection delay the server asked for with `retry`, in milliseconds.
    public private(set) var retryMilliseconds: Int?

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var hasData = false
    private var event = ""
    private var eventId: String?
    private var afterCR = false
    private var started = false

    public init(maxEventBytes: Int = 16 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    /// The events completed by `bytes`.
    public mutating func feed(_ bytes: [UInt8]) throws(Malformed) -> [SSEEvent] {
        var events: [SSEEvent] = []
        var start = bytes.startIndex
        // A UTF-8 byte-order mark at the very start is skipped, as the spec says.
        if !started, !bytes.isEmpty {
            started = true
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start += 3 }
        }
        for byte in bytes[start...] {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }
            }
            if byte == 0x0D || byte == 0x0A {
                afterCR = byte == 0x0D
                if let finished = try endLine() { events.append(finished) }
                continue
            }
            line.append(byte)
            if line.count + data.count > maxEventBytes {
                throw Malformed(description: "an event of the server's stream is larger than \(maxEventBytes) bytes")
            }
        }
        return events
    }

    private mutating func endLine() throws(Malformed) -> SSEEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            // A blank line dispatches the event gathered so far (none without data).
            defer { data = []; hasData = false; event = ""; eventId = nil }
            guard hasData else { return nil }
            return SSEEvent(event: event.isEmpty ? "message" : event, data: data, id: eventId)
        }
        if line.first == UInt8(ascii: ":") { return nil }  // a comment (keep-alives)
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { Array(line[line.index(after: $0)...]) } ?? []
        if value.first == UInt8(ascii: " ") { value.removeFirst() }
        switch name {
        case "data":
            if hasData { data.append(0x0A) }
            data += value
            hasData = true
        case "event": event = String(decoding: value, as: UTF8.self)
        case "id" where !value.contains(0):
            let id = String(decoding: value, as: UTF8.self)
            eventId = id
            lastEventId = id
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                retryMilliseconds = Int(String(decoding: value, as: UTF8.self))
            }
        default: break  // unknown fields are ignored
        }
        return nil
    }
}
