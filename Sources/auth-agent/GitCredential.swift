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

    static func run(_ operation: String, account: String?, link: AgentLink) throws(ToolFailure) -> String {
        let request = parse(readRequest())
        switch operation {
        case "get": return try get(request, account: account, link: link)
        case "erase": try erase(request, account: account, link: link); return ""
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
    /// with — `sign`'s rule, through the agent. Not covered or not logged in → no answer (exit 0), so
    /// git moves on to its other helpers; one hint on stderr. A DPoP provider's token is refused by
    /// the core (`token {bearer}`): git would send it without a proof.
    private static func get(_ request: [String: String], account: String?, link: AgentLink) throws(ToolFailure) -> String {
        guard let origin = origin(request) else { return "" }
        do throws(ToolFailure) {
            let routed = try link.call(SignMethod.self, .init(url: origin.description))
            guard let provider = routed.provider else { return "" }
            let entry = try Tool.entry(provider, link)
            guard let named = namedAccount(request, account: account, entry: entry, link: link) else { return "" }
            // The default account's signature is the one that found the provider.
            let signed = named == nil ? routed : try link.call(SignMethod.self, .init(url: origin.description, provider: provider, account: named))
            guard let token = signed.bearerToken else {
                _ = try link.call(TokenMethod.self, .init(provider: provider, account: named, bearer: true))
                throw ToolFailure(.failed, "\(provider) signs with something other than a bearer token; git cannot be given it")
            }
            // A username git was given (`https://alice@host/…`, credential.username) stays the one it sends.
            let username = named.flatMap { _ in request["username"] } ?? entry.gitUsername ?? defaultUsername
            guard let text = answer(username: username, token: token, expiresAt: signed.expiresAt) else {
                throw ToolFailure(.failed, "the token or gitUsername of \(provider) holds a line break; git cannot be given it")
            }
            return text
        } catch where error.needsLogin {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message)) run: auth-agent login\(error.provider.map { " \($0)" } ?? "")")
            return ""
        }
    }

    /// `erase`: git got a 401 with this password; refresh unless it was already replaced.
    private static func erase(_ request: [String: String], account: String?, link: AgentLink) throws(ToolFailure) {
        guard let origin = origin(request), let password = request["password"] else { return }
        do throws(ToolFailure) {
            guard let provider = try link.call(SignMethod.self, .init(url: origin.description)).provider else { return }
            let entry = try Tool.entry(provider, link)
            guard let named = namedAccount(request, account: account, entry: entry, link: link) else { return }
            let result = try link.call(RefreshMethod.self, .init(provider: provider, account: named, failedAuthorization: password))
            // git itself only says the authentication failed; the person should know a retry will work.
            if result.refreshed {
                Logger.stderrSink("auth-agent: the token of \(TerminalText.escaped(entry.displayName)) was refreshed; run the git command again.")
            }
        } catch where error.needsLogin {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message)) run: auth-agent login\(error.provider.map { " \($0)" } ?? "")")
        }
    }

    /// The account git's `username` names, when it names one of the provider's accounts (as every
    /// `--account` is resolved: by id or by a name its user logs in with); otherwise the default
    /// account (`.some(nil)`), so a username like `oauth2` or `git` changes nothing. `--account`
    /// wins over both. Nil, after the agent said why, when the username fits several accounts:
    /// git then asks its other helpers rather than get one of them at random.
    private static func namedAccount(_ request: [String: String], account: String?, entry: StatusMethod.Result.Provider, link: AgentLink) -> String?? {
        if let account { return .some(account) }
        guard let username = request["username"], !username.isEmpty else { return .some(nil) }
        if entry.accounts.contains(where: { $0.id == username }) { return .some(username) }
        let matching = entry.accounts.filter { AccountNames.matches(username, account: $0.id, user: $0.user) }
        guard matching.count > 1 else { return .some(matching.first?.id) }
        // Several: the agent resolves the name as it resolves every `account`, and says which fit.
        do throws(ToolFailure) {
            _ = try link.call(TokenMethod.self, .init(provider: entry.id, account: username))
        } catch {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(error.message))")
        }
        return nil
    }
}
