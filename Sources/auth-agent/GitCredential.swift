import AuthCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Logging

/// `auth-agent git-credential get|store|erase`: git's credential-helper protocol
/// (`key=value` lines on stdin, ended by a blank line or end of file).
enum GitCredential {
    /// The username git sends with the token when the provider sets no `gitUsername`: servers that
    /// take a token as the Basic-auth password accept any username, and `oauth2` is the one most document.
    static let defaultUsername = "oauth2"

    static func run(_ operation: String, session: ToolSession) throws(ToolFailure) -> String {
        let request = parse(readRequest())
        switch operation {
        case "get": return try get(request, session: session)
        case "erase": try erase(request, session: session); return ""
        default: return ""  // `store`, and operations of later gits: nothing to keep, the store is ours
        }
    }

    /// Reads the request up to a blank line or end of file.
    private static func readRequest() -> [String] {
        var lines: [String] = []
        while let line = readLine(strippingNewline: true), !line.isEmpty { lines.append(line) }
        return lines
    }

    /// `key=value` lines; the last value of a repeated key wins (array keys like `wwwauth[]` are not needed).
    static func parse(_ lines: [String]) -> [String: String] {
        var request: [String: String] = [:]
        for line in lines {
            guard let eq = line.firstIndex(of: "=") else { continue }
            request[String(line[..<eq])] = String(line[line.index(after: eq)...])
        }
        return request
    }

    /// The origin git asks about (`protocol://host[:port]`), when it is one a token may go to:
    /// https, or plain http to loopback only. The URL is built from the two fields, so each must
    /// be what git puts there and nothing more: a `#`, `/`, `?` or `@` in `host`, or a whole URL
    /// in `protocol`, would make that URL name another server than the one git talks to.
    static func origin(_ request: [String: String]) -> Origin? {
        guard let scheme = request["protocol"], isScheme(scheme), let host = request["host"], isHostAndPort(host),
              let origin = Origin(url: "\(scheme)://\(host)"), origin.isSecureForBearer else { return nil }
        return origin
    }

    /// RFC 3986's `scheme`: a letter, then letters, digits, `+`, `-` or `.`.
    static func isScheme(_ text: String) -> Bool {
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// A host name (letters, digits, `-`, `.`, `_`) or a bracketed IPv6 address, then an optional `:port`.
    static func isHostAndPort(_ text: String) -> Bool {
        var host = Substring(text)
        if let colon = text.lastIndex(of: ":"), !text[colon...].contains("]") {
            let port = text[text.index(after: colon)...]
            guard (1...5).contains(port.utf8.count), port.utf8.allSatisfy(isDigit) else { return false }
            host = text[..<colon]
        }
        if host.hasPrefix("[") {
            let inside = host.dropFirst().utf8
            guard inside.last == UInt8(ascii: "]"), inside.count > 1 else { return false }
            return inside.dropLast().allSatisfy { isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
        }
        return !host.isEmpty && host.utf8.allSatisfy { isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") }
    }

    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    private static func isHexDigit(_ c: UInt8) -> Bool { isDigit(c) || ((c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "f")) }

    /// The answer to `get`; `password_expiry_utc` lets git ≥ 2.41 drop the token when it expires.
    /// Nil when a value holds a newline or NUL, which would smuggle other keys into git's request.
    static func answer(username: String, token: String, expiresAt: Date?) -> String? {
        guard ![username, token].contains(where: { $0.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" } }) else { return nil }
        var text = "username=\(username)\npassword=\(token)\n"
        if let expiresAt { text += "password_expiry_utc=\(Int(expiresAt.timeIntervalSince1970))\n" }
        return text
    }

    /// `get`: the token for the provider covering the origin, of the shape that origin is configured
    /// with (as `sign` gives it). Not covered or not logged in → no answer (exit 0), so git moves on
    /// to its other helpers; one hint on stderr.
    private static func get(_ request: [String: String], session: ToolSession) throws(ToolFailure) -> String {
        guard let route = coverage(request, session: session) else { return "" }
        let (provider, shape) = (route.provider, route.shape)
        let token: (token: String, type: String, expiresAt: String?)
        guard let named = namedAccount(request, provider: provider, session: session) else { return "" }
        do {
            token = try session.token(provider, account: AccountChoice(account: named), shape: shape)
        } catch where error.needsLogin {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message)) run: auth-agent login \(provider)")
            return ""
        }
        // A username git was given (`https://alice@host/…`, credential.username) stays the one it sends.
        let configured = try session.provider(provider).gitUsername ?? defaultUsername
        let username = named.flatMap { _ in request["username"] } ?? configured
        guard let text = answer(username: username, token: token.token, expiresAt: token.expiresAt.flatMap(RFC3339.parse)) else {
            throw ToolFailure(.failed, "the token or gitUsername of \(provider) holds a line break; git cannot be given it")
        }
        return text
    }

    /// `erase`: git got a 401 with this password; refresh unless it was already replaced.
    private static func erase(_ request: [String: String], session: ToolSession) throws(ToolFailure) {
        guard let provider = coverage(request, session: session)?.provider, let password = request["password"],
              let named = namedAccount(request, provider: provider, session: session) else { return }
        let service = session.service
        do {
            let choice = AccountChoice(account: named)
            let result = try ToolSession.wait(timeout: session.requestTimeout) { () async throws(AuthError) in
                try await service.refresh(provider: provider, account: choice, failedAuthorization: password)
            }
            // git itself only says the authentication failed; the person should know a retry will work.
            if result.refreshed {
                Logger.stderrSink("auth-agent: the token of \(try session.provider(provider).displayName) was refreshed; run the git command again.")
            }
        } catch where error.needsLogin {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message)) run: auth-agent login \(provider)")
        }
    }

    /// The account git's `username` names, when it names one of the provider's accounts
    /// (as every `--account` is resolved: by id or by a name its user logs in with); otherwise
    /// the default account (`.some(nil)`), so a username like `oauth2` or `git` changes nothing.
    /// `--account` wins over both. Nil, after saying why, when the username fits several
    /// accounts: git then asks its other helpers rather than get one of them at random.
    private static func namedAccount(_ request: [String: String], provider: String, session: ToolSession) -> String?? {
        if let account = session.command.account { return .some(account) }
        guard let username = request["username"], !username.isEmpty else { return .some(nil) }
        do {
            return .some(try session.service.account(named: username, provider: provider))
        } catch {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message))")
            return nil
        }
    }

    /// The provider covering git's origin and the token shape configured there: `sign`'s rule.
    private static func coverage(_ request: [String: String], session: ToolSession) -> Route? {
        guard let origin = origin(request) else { return nil }
        return (try? session.service.coverage(url: origin.description)) ?? nil
    }
}
