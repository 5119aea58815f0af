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
        for scalar in text.unicodeScalars where URLAuthority.isForbidden(scalar) { return nil }
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon].lowercased()
        guard let defaultPort = Origin.defaultPort(for: scheme) else { return nil }
        let afterScheme = text[text.index(after: colon)...]
        guard afterScheme.hasPrefix("//") else { return nil }
        let authorityStart = afterScheme.index(afterScheme.startIndex, offsetBy: 2)
        let tail = afterScheme[authorityStart...]
        let authorityEnd = tail.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? tail.endIndex
        let authority = tail[..<authorityEnd]
        var hostPort = authority
        var hasUserinfo = false
        if let at = authority.lastIndex(of: "@") {
            hasUserinfo = true
            hostPort = authority[authority.index(after: at)...]
        }
        guard let (host, port) = URLAuthority.splitHostPort(hostPort) else { return nil }
        self.scheme = scheme
        self.hasUserinfo = hasUserinfo
        self.host = host
        self.port = port ?? defaultPort
        self.hasExplicitPort = port != nil
        self.rest = tail[authorityEnd...]
    }

    /// Whitespace, controls and backslashes: characters on which URL parsers disagree.
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value <= 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\\"
            || scalar.properties.isWhitespace || scalar.properties.generalCategory == .format
    }

    /// Splits `host[:port]` or `[v6][:port]`; the port is `nil` when absent.
    static func splitHostPort(_ text: Substring) -> (String, Int?)? {
        let hostPart: Substring
        let portPart: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            hostPart = text[...close]
            let after = text[text.index(after: close)...]
            if after.isEmpty {
                portPart = nil
            } else {
                guard after.hasPrefix(":") else { return nil }
                portPart = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        } else {
            hostPart = text
            portPart = nil
        }
        guard let host = normalizedHost(hostPart) else { return nil }
        guard let portPart else { return (host, nil) }
        guard let port = parsePort(portPart) else { return nil }
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
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.count > 2 else { return nil }
            return canonicalIPv6(String(text.dropFirst().dropLast())).map { "[\($0)]" }
        }
        let host = text.lowercased()
        guard !host.isEmpty, host.utf8.allSatisfy(isHostByte) else { return nil }
        guard !host.hasPrefix("."), !host.contains("..") else { return nil }
        let labels = host.split(separator: ".")
        // A last label that is numeric makes the whole host an IPv4 address to
        // WHATWG parsers ("127.1", "0x7f.1", "2130706433"); accept only the
        // unambiguous dotted-quad spelling.
        if let last = labels.last, looksNumeric(last) {
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
        if label.hasPrefix("0x") { return label.dropFirst(2).allSatisfy(\.isHexDigit) }
        return label.allSatisfy { $0.isASCII && $0.isNumber }
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
