import Locking

/// What the origins of recently signed URLs resolve to (for the service, the
/// provider covering each), keyed by their `scheme://authority` prefix: a host
/// signs many URLs on few origins, and parsing the authority and matching it
/// were the costliest steps of `sign`. The prefix is cut exactly where
/// `URLAuthority` cuts it, and the whole URL is still checked for forbidden
/// characters, so a cached answer is the one `resolve(Origin(url:))` would give.
final class OriginCache<Value: Sendable>: @unchecked Sendable {
    private final class Entry {
        let key: [UInt8]
        let value: Value
        init(key: [UInt8], value: Value) {
            self.key = key
            self.value = value
        }
    }

    private let lock = Lock()
    private var entries: [String: Entry] = [:]
    /// The entry found last: URLs come in runs on one origin, and comparing its
    /// bytes spares building the key and hashing it.
    private var last: Entry?
    private let capacity: Int
    private let resolve: @Sendable (Origin?) -> Value
    /// How many prefixes were resolved and kept: what a test reads to see that URLs shared an entry.
    private var kept = 0

    init(capacity: Int = 256, resolve: @escaping @Sendable (Origin?) -> Value) {
        self.capacity = capacity
        self.resolve = resolve
    }

    func value(for url: String) -> Value {
        guard URLAuthority.isClean(url) else { return resolve(nil) }
        var text = url
        let found = text.withUTF8 { bytes -> Lookup in
            guard let end = Self.authorityEnd(bytes) else { return .noAuthority }
            let prefix = UnsafeBufferPointer(rebasing: bytes[..<end])
            lock.lock()
            defer { lock.unlock() }
            if let last, last.key.elementsEqual(prefix) { return .hit(last.value) }
            let key = String(decoding: prefix, as: UTF8.self)
            guard let entry = entries[key] else { return .miss(key) }
            last = entry
            return .hit(entry.value)
        }
        switch found {
        case .hit(let value): return value
        case .noAuthority: return resolve(Origin(url: url))
        case .miss(let key):
            let entry = Entry(key: Array(key.utf8), value: resolve(Origin(url: key)))
            lock.lock()
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
            last = entry
            kept += 1
            lock.unlock()
            return entry.value
        }
    }

    /// How many prefixes were resolved and kept so far (misses of the cache).
    var resolved: Int { lock.withLock { kept } }

    private enum Lookup {
        case hit(Value)
        case miss(String)
        case noAuthority
    }

    /// Where the key of `url`'s bytes ends: `scheme://authority` — up to the first
    /// `/`, `?` or `#` after the `//` that follows the first `:`; nil when the URL
    /// does not have that shape.
    static func authorityEnd(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon + 2 < bytes.count,
              bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/")
        else { return nil }
        var i = colon + 3
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "/") || c == UInt8(ascii: "?") || c == UInt8(ascii: "#") { break }
            i += 1
        }
        return i
    }
}

extension OriginCache where Value == Origin? {
    /// A cache of the origins themselves.
    convenience init(capacity: Int = 256) {
        self.init(capacity: capacity, resolve: { $0 })
    }

    func origin(of url: String) -> Origin? { value(for: url) }

    /// The key `url` is cached under (`authorityEnd`), as text.
    static func authorityPrefix(_ url: String) -> String? {
        var text = url
        return text.withUTF8 { bytes in authorityEnd(bytes).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self) } }
    }
}
