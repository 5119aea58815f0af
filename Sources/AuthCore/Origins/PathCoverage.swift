/// The one rule of which URLs on an origin a learned provider covers: routing (`sign`,
/// `fetch`), the redirects a token follows, and discovery's check that a resource covers the
/// URL that asked all go by it, so they cannot disagree.
///
/// A covered path is a prefix at a segment boundary (`/mcp` covers `/mcp` and `/mcp/x`, not
/// `/mcpx`), compared with the path the server will get, not the bytes the host gave: libcurl
/// and URLSession remove dot segments before sending (RFC 3986 §5.2.4), so
/// `/tenant-a/mcp/../../tenant-b` reaches `/tenant-b` and must be judged as `/tenant-b`.
/// Servers disagree on whether `%2e`, `%2f` and `%5c` are dots, slashes and backslashes, so a
/// path with one of them that would be covered is `ambiguous`: the caller refuses it.
///
/// The common path — no `.` segment, no `%2e`/`%2f`/`%5c`, no `\` — is one scan of the
/// path's bytes and a byte comparison per prefix, with no allocation; only a path with dot
/// segments is copied to be normalised.
enum PathCoverage {
    enum Verdict: Equatable {
        case covered, outside
        /// Covered as written, but with an encoded dot, slash or backslash whose meaning the server decides.
        case ambiguous
    }

    /// Where `url` lies against `prefixes` (paths without a trailing `/`; empty for the root).
    /// The origin is the caller's to compare.
    static func verdict(_ url: String, prefixes: [[UInt8]]) -> Verdict {
        var url = url
        return url.withUTF8 { verdict(url: $0, prefixes: prefixes) }
    }

    static func verdict(url: UnsafeBufferPointer<UInt8>, prefixes: [[UInt8]]) -> Verdict {
        let path = UnsafeBufferPointer(rebasing: url[pathRange(url)])
        let shape = shape(of: path)
        if shape == .plain { return isUnder(path, prefixes) ? .covered : .outside }
        let normalised = removeDotSegments(path)
        guard normalised.withUnsafeBufferPointer({ isUnder($0, prefixes) }) else { return .outside }
        return shape == .encodesSeparators ? .ambiguous : .covered
    }

    /// Whether `url` is on `resource`'s origin and under its path.
    static func covers(resource: String, url: String) -> Bool {
        guard let a = Origin(url: resource), let b = Origin(url: url), a == b else { return false }
        return verdict(url, prefixes: [prefix(of: resource)]) == .covered
    }

    /// The prefix a covered URL stands for: its path, dot segments removed, without query,
    /// fragment or trailing `/` (empty for the root).
    static func prefix(of url: String) -> [UInt8] {
        var url = url
        var path = url.withUTF8 { bytes in removeDotSegments(UnsafeBufferPointer(rebasing: bytes[pathRange(bytes)])) }
        if path.last == UInt8(ascii: "/") { path.removeLast() }
        return path
    }

    /// What a URL teaches a learned provider to cover: its origin and its path as the server
    /// gets it, without query or fragment (`https://host/tenant-a/mcp`; the root is `https://host/`).
    static func coveredURL(_ url: String) -> String? {
        guard let origin = Origin(url: url) else { return nil }
        let path = String(decoding: prefix(of: url), as: UTF8.self)
        return origin.description + (path.isEmpty ? "/" : path)
    }

    /// Whether `url`'s path has `%2e`, `%2f`, `%5c` or `\`, wherever it lies.
    static func encodesSeparators(_ url: String) -> Bool {
        var url = url
        return url.withUTF8 { bytes in shape(of: UnsafeBufferPointer(rebasing: bytes[pathRange(bytes)])) == .encodesSeparators }
    }

    // MARK: The pieces

    /// The path of an absolute URL's bytes: from the first `/` after the authority (after
    /// `://`, which has none) to the first `?` or `#`; empty when there is no path.
    static func pathRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int> {
        var i = 0
        while i + 2 < bytes.count, !(bytes[i] == UInt8(ascii: ":") && bytes[i + 1] == UInt8(ascii: "/") && bytes[i + 2] == UInt8(ascii: "/")) { i += 1 }
        i = min(i + 3, bytes.count)
        while i < bytes.count, bytes[i] != UInt8(ascii: "/"), bytes[i] != UInt8(ascii: "?"), bytes[i] != UInt8(ascii: "#") { i += 1 }
        var end = i
        while end < bytes.count, bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        return i..<end
    }

    enum Shape: Equatable { case plain, dotSegments, encodesSeparators }

    /// One pass over a path: an encoded dot, slash or backslash (any case) or a backslash
    /// wins; else whether a segment is `.` or `..`.
    static func shape(of path: UnsafeBufferPointer<UInt8>) -> Shape {
        var dots = false
        let n = path.count
        var i = 0
        while i < n {
            let c = path[i]
            if c == UInt8(ascii: "\\") { return .encodesSeparators }
            if c == UInt8(ascii: "%"), i + 2 < n {
                let (hi, lo) = (path[i + 1], path[i + 2] | 0x20)
                if (hi == UInt8(ascii: "2") && (lo == UInt8(ascii: "e") || lo == UInt8(ascii: "f"))) || (hi == UInt8(ascii: "5") && lo == UInt8(ascii: "c")) {
                    return .encodesSeparators
                }
            }
            if c == UInt8(ascii: "."), i == 0 || path[i - 1] == UInt8(ascii: "/") {
                let next = i + 1 < n ? path[i + 1] : UInt8(ascii: "/")
                if next == UInt8(ascii: "/") || (next == UInt8(ascii: ".") && (i + 2 >= n || path[i + 2] == UInt8(ascii: "/"))) { dots = true }
            }
            i += 1
        }
        return dots ? .dotSegments : .plain
    }

    /// RFC 3986 §5.2.4 for an absolute path (or an empty one): `.` segments dropped, each `..`
    /// dropping the segment before it (never above the root); a trailing `.` or `..` leaves a `/`.
    static func removeDotSegments(_ path: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        guard !path.isEmpty else { return [] }
        let segments = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        var kept: [ArraySlice<UInt8>] = []
        for (k, segment) in segments.enumerated() {
            let last = k == segments.count - 1
            let isDot = segment.elementsEqual([UInt8(ascii: ".")]), isDotDot = segment.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")])
            if isDotDot, !kept.isEmpty { kept.removeLast() }
            if isDot || isDotDot {
                if last { kept.append([]) }
                continue
            }
            kept.append(ArraySlice(segment))
        }
        var out: [UInt8] = []
        for segment in kept {
            out.append(UInt8(ascii: "/"))
            out.append(contentsOf: segment)
        }
        return out.isEmpty ? [UInt8(ascii: "/")] : out
    }

    /// Whether `path` is one of `prefixes` or goes on below it (the next byte `/`).
    static func isUnder(_ path: UnsafeBufferPointer<UInt8>, _ prefixes: [[UInt8]]) -> Bool {
        for prefix in prefixes where path.count >= prefix.count {
            var k = 0
            while k < prefix.count, path[k] == prefix[k] { k += 1 }
            if k == prefix.count, path.count == k || path[k] == UInt8(ascii: "/") { return true }
        }
        return false
    }
}
