/// What a protected resource's `WWW-Authenticate` says about getting a token (RFC 6750 §3,
/// RFC 9728 §5.1): where its metadata is, which scopes it wants, and why it refused.
///
/// Parsed by RFC 9110 §11.6.1's grammar: several challenges in one header (or several
/// headers joined by commas), `token68` credentials, auth-params as tokens or quoted strings
/// with backslash escapes, parameter names in any case. Only the first `Bearer` challenge
/// counts; other schemes are skipped, and garbage ends parsing without failing — a header
/// is a hint from the network, never a reason to crash or to trust more.
public struct BearerChallenge: Sendable, Equatable {
    public var resourceMetadata: String?
    /// `scope`, split on spaces.
    public var scopes: [String]
    /// `error` (`invalid_token`, `insufficient_scope`…).
    public var error: String?

    public init(resourceMetadata: String? = nil, scopes: [String] = [], error: String? = nil) {
        self.resourceMetadata = resourceMetadata
        self.scopes = scopes
        self.error = error
    }

    /// The Bearer challenge among `headers` (each a `WWW-Authenticate` value); nil when none.
    public static func parse(_ headers: [String]) -> BearerChallenge? {
        for header in headers {
            for (scheme, params) in challenges(header) where scheme.lowercased() == "bearer" {
                return BearerChallenge(resourceMetadata: params["resource_metadata"].flatMap { $0.isEmpty ? nil : $0 },
                                       scopes: params["scope"].map { $0.split(separator: " ").map(String.init) } ?? [],
                                       error: params["error"])
            }
        }
        return nil
    }

    public static func parse(_ header: String) -> BearerChallenge? { parse([header]) }

    /// Every challenge of one header value: its scheme and its auth-params (names lowercased;
    /// the first of a repeated name wins).
    static func challenges(_ header: String) -> [(String, [String: String])] {
        var s = Scanner(Array(header.utf8))
        var result: [(String, [String: String])] = []
        while true {
            s.skipListSeparators()
            guard let scheme = s.token() else { return result }  // the end, or garbage
            var params: [String: String] = [:]
            var first = true
            while true {
                let mark = s.index
                s.skipSpaces()
                guard let name = s.token() else { break }
                s.skipSpaces()
                let isParam = s.peek == UInt8(ascii: "=") && s.after(1).map { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: ",") } == true
                guard isParam else {
                    if first {
                        // token68 (RFC 9110 §11.4): a credential right after the scheme, '=' padding and all.
                        while s.peek == UInt8(ascii: "=") { s.index += 1 }
                    } else {
                        s.index = mark  // the next challenge's scheme
                    }
                    break
                }
                s.index += 1
                s.skipSpaces()
                guard let value = s.quoted() ?? s.token() else { return result + [(scheme, params)] }
                if params[name.lowercased()] == nil { params[name.lowercased()] = value }
                first = false
                s.skipSpaces()
                if s.atEnd { break }
                guard s.peek == UInt8(ascii: ",") else { return result + [(scheme, params)] }  // garbage after a value
                s.skipListSeparators()
            }
            result.append((scheme, params))
        }
    }

    /// A byte cursor over one header value.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[index] }

        mutating func skipSpaces() {
            while let c = peek, c == 0x20 || c == 0x09 { index += 1 }
        }

        mutating func skipListSeparators() {
            while let c = peek, c == 0x20 || c == 0x09 || c == UInt8(ascii: ",") { index += 1 }
        }

        /// The byte `offset` places ahead, nil past the end.
        func after(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

        /// RFC 9110 tchar+ (token68's `/` and `+` and `~` included, so a credential is skipped whole).
        mutating func token() -> String? {
            let start = index
            while let c = peek, Self.isTokenByte(c) { index += 1 }
            return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
        }

        /// A quoted-string with its escapes undone; nil (cursor unmoved) when not at one or unterminated.
        mutating func quoted() -> String? {
            guard peek == UInt8(ascii: "\"") else { return nil }
            var i = index + 1
            var out: [UInt8] = []
            while i < bytes.count {
                let c = bytes[i]
                if c == UInt8(ascii: "\"") {
                    index = i + 1
                    return String(decoding: out, as: UTF8.self)
                }
                if c == UInt8(ascii: "\\"), i + 1 < bytes.count {
                    out.append(bytes[i + 1])
                    i += 2
                    continue
                }
                out.append(c)
                i += 1
            }
            return nil
        }

        static func isTokenByte(_ c: UInt8) -> Bool {
            if c >= 0x30 && c <= 0x39 || c >= 0x41 && c <= 0x5A || c >= 0x61 && c <= 0x7A { return true }
            return "!#$%&'*+-.^_`|~/".utf8.contains(c)
        }
    }
}
