#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// The origins of recently signed URLs, keyed by their `scheme://authority`
/// prefix: a host signs many URLs on few origins, and parsing the authority is
/// the costliest step of `sign`. The prefix is cut exactly where `URLAuthority`
/// cuts it, and the whole URL is still checked for forbidden characters, so a
/// cached answer is the answer `Origin(url:)` would give.
final class OriginCache: @unchecked Sendable {
    private let lock = Lock()
    private var entries: [String: Origin?] = [:]
    private let capacity: Int

    init(capacity: Int = 256) { self.capacity = capacity }

    func origin(of url: String) -> Origin? {
        guard URLAuthority.isClean(url) else { return nil }
        guard let key = Self.authorityPrefix(url) else { return Origin(url: url) }
        lock.lock()
        if let hit = entries[key] {
            lock.unlock()
            return hit
        }
        lock.unlock()
        let origin = Origin(url: key)
        lock.lock()
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = origin
        lock.unlock()
        return origin
    }

    /// `scheme://authority` — up to the first `/`, `?` or `#` after the `//` that
    /// follows the first `:`; nil when the URL does not have that shape.
    static func authorityPrefix(_ url: String) -> String? {
        let utf8 = url.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let afterColon = utf8[utf8.index(after: colon)...]
        guard afterColon.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) else { return nil }
        let authority = afterColon.dropFirst(2)
        let end = authority.firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? utf8.endIndex
        return String(url[..<end])
    }
}
