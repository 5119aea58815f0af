#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The pieces of an absolute http(s) URL that decide where it goes, plus what
/// follows them, so configuration can insist an origin has no path and an
/// endpoint carries no credentials. The single parser behind `Origin`.
struct URLAuthority: Equatable {
    var scheme: String
    var hasUserinfo: Bool
    var host: String
    var port: Int
    var hasExplicitPort: Bool
    /// Everything after the authority: path, query and fragment (may be empty).
    var rest: Substring

    init?(_ text: String) {
        guard URLAuthority.isClean(text) else { return nil }
        // Work on UTF-8 offsets: every delimiter that matters here is ASCII, and
        // byte scans are many times cheaper than Character indexing on this hot path.
        let utf8 = text.utf8
        guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = URLAuthority.lowercased(Substring(utf8[..<colon]))
        guard let defaultPort = Origin.defaultPort(for: scheme) else { return nil }
        let afterScheme = utf8[utf8.index(after: colon)...]
        guard afterScheme.starts(with: [UInt8(ascii: "/"), UInt8(ascii: "/")]) else { return nil }
        let tail = afterScheme.dropFirst(2)
        let authorityEnd = tail.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) ?? tail.endIndex
        let authority = tail[..<authorityEnd]
        var hostPort = authority
        var hasUserinfo = false
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) {
            hasUserinfo = true
            hostPort = authority[authority.index(after: at)...]
        }
        guard let (host, port) = URLAuthority.splitHostPort(Substring(hostPort)) else { return nil }
        self.scheme = scheme
        self.hasUserinfo = hasUserinfo
        self.host = host
        self.port = port ?? defaultPort
        self.hasExplicitPort = port != nil
        self.rest = Substring(tail[authorityEnd...])
    }

    /// ASCII lowercasing; copies only when there is an uppercase letter.
    static func lowercased(_ text: Substring) -> String {
        if !text.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) { return String(text) }
        return String(decoding: text.utf8.map(lowercaseASCII), as: UTF8.self)
    }

    static func lowercaseASCII(_ c: UInt8) -> UInt8 {
        c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") ? c + 32 : c
    }

    /// No forbidden character anywhere. ASCII text (nearly every URL) is checked
    /// byte by byte; Unicode properties are consulted only for non-ASCII text.
    static func isClean(_ text: String) -> Bool {
        var text = text
        // Over the contiguous bytes: a loop the compiler keeps tight, on every `sign`.
        let ascii = text.withUTF8 { bytes -> Bool? in
            for b in bytes {
                if b >= 0x80 { return nil }
                if b <= 0x20 || b == 0x7F || b == UInt8(ascii: "\\") { return false }
            }
            return true
        }
        if let ascii { return ascii }
        return !text.unicodeScalars.contains(where: isForbidden)
    }

    /// Whitespace, controls and backslashes: characters on which URL parsers disagree.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\"
            || scalar.properties.isWhitespace || scalar.properties.generalCategory == .format
    }

    /// Splits `host[:port]` or `[v6][:port]`; the port is `nil` when absent.
    static func splitHostPort(_ text: Substring) -> (String, Int?)? {
        let utf8 = text.utf8
        let hostPart: Substring.UTF8View.SubSequence
        let portPart: Substring.UTF8View.SubSequence?
        if utf8.first == UInt8(ascii: "[") {
            guard let close = utf8.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostPart = utf8[...close]
            let after = utf8[utf8.index(after: close)...]
            if after.isEmpty {
                portPart = nil
            } else {
                guard after.first == UInt8(ascii: ":") else { return nil }
                portPart = after.dropFirst()
            }
        } else if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            hostPart = utf8[..<colon]
            portPart = utf8[utf8.index(after: colon)...]
        } else {
            hostPart = utf8[...]
            portPart = nil
        }
        guard let host = normalizedHost(Substring(hostPart)) else { return nil }
        guard let portPart else { return (host, nil) }
        guard let port = parsePort(Substring(portPart)) else { return nil }
        return (host, port)
    }

    /// 1...65535 written as one to five ASCII digits.
    static func parsePort(_ text: Substring) -> Int? {
        guard (1...5).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let value = Int(text), (1...65535).contains(value)
        else { return nil }
        return value
    }

    /// Lowercased host, or `nil` for anything ambiguous.
    static func normalizedHost(_ text: Substring) -> String? {
        if text.utf8.first == UInt8(ascii: "[") {
            guard text.utf8.last == UInt8(ascii: "]"), text.utf8.count > 2 else { return nil }
            return canonicalIPv6(String(text.dropFirst().dropLast())).map { "[\($0)]" }
        }
        let host = lowercased(text)
        let bytes = host.utf8
        guard !bytes.isEmpty, bytes.allSatisfy(isHostByte) else { return nil }
        // No empty label. A plain loop: `zip(bytes, bytes.dropFirst())` instantiated its generic iterator's metadata
        // at every start, 3 % of a helper's (type lookup by mangled name, conformance scans).
        var previous: UInt8 = UInt8(ascii: ".")
        for byte in bytes {
            if byte == UInt8(ascii: "."), previous == UInt8(ascii: ".") { return nil }
            previous = byte
        }
        // A last label that is numeric makes the whole host an IPv4 address to
        // WHATWG parsers ("127.1", "0x7f.1", "2130706433"); accept only the
        // unambiguous dotted-quad spelling.
        let trimmed = host.utf8.last == UInt8(ascii: ".") ? host.utf8.dropLast() : host.utf8[...]
        let lastLabel = trimmed.lastIndex(of: UInt8(ascii: ".")).map { trimmed[trimmed.index(after: $0)...] } ?? trimmed
        if !lastLabel.isEmpty, looksNumeric(Substring(lastLabel)) {
            let withoutTrailingDot = host.hasSuffix(".") ? String(host.dropLast()) : host
            guard dottedQuad(withoutTrailingDot) != nil, !host.hasSuffix(".") else { return nil }
        }
        return host
    }

    static func isHostByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    static func looksNumeric(_ label: Substring) -> Bool {
        let utf8 = label.utf8
        if utf8.starts(with: [UInt8(ascii: "0"), UInt8(ascii: "x")]) { return utf8.dropFirst(2).allSatisfy(isHexDigit) }
        return utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f"))
            || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "F"))
    }

    /// The four octets of a canonical `a.b.c.d` (no leading zeros), else `nil`.
    static func dottedQuad(_ host: String) -> [Int]? {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var octets: [Int] = []
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  part == "0" || !part.hasPrefix("0"), let v = Int(part), v <= 255
            else { return nil }
            octets.append(v)
        }
        return octets
    }

    /// RFC 5952 text of an IPv6 address (lowercase, `::` compressed), so that
    /// `[0:0:0:0:0:0:0:1]` and `[::1]` compare equal; `nil` when invalid.
    static func canonicalIPv6(_ text: String) -> String? {
        guard text.utf8.allSatisfy({ c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46) || c == 0x3A || c == 0x2E
        }) else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(decoding: buffer.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
