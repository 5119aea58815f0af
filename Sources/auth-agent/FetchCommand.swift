import AuthCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON
import JSONRPC
import Logging
import Wire

/// `auth-agent fetch`: one HTTP request through the agent's `fetch` — signed with the
/// provider that covers the URL, refreshed and resent once after a 401 — printed like
/// curl prints it, so a shell script gets the token's benefits without ever holding it.
enum FetchCommand {
    static func run(_ options: ToolCommand.FetchOptions, account: String?, shape: TokenShape?, link: AgentLink) throws(ToolFailure) -> String {
        let request = try request(options)
        let environment = ProcessEnvironment.current()
        // With a person at a terminal, an API that asks for a login gets one (learned from its 401).
        let attended = Terminal.controlling().map { close($0.fd); return true } ?? false
        let live = LivePromptLine(environment: environment)
        defer { live.stop() }
        let params = FetchMethod.Params(request, account: account, shape: shape, login: attended ? .ifNeeded : .hint,
                                        openBrowser: attended ? LivePromptLine.canOpenBrowser(environment) : nil)
        let response = try link.call(FetchMethod.self, params, timeout: request.timeout + link.requestTimeout + (attended ? TerminalLogin.timeout : 0),
                                     notification: TerminalLogin.prompts(live, displayName: Origin(url: request.url)?.description ?? request.url, link: link))
        if let hint = response.login, let server = hint.authorizationServer {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(hint.resource)) wants a login at \(TerminalText.escaped(server)); run: auth-agent login \(TerminalText.escaped(hint.resource))")
        } else if let hint = response.login {
            Logger.stderrSink("auth-agent: \(TerminalText.escaped(hint.resource)) wants a login; its metadata on another origin "
                              + "(\(TerminalText.escaped(hint.resourceMetadata ?? "?"))) is read only for a login: run this on a terminal, or list its origin in learn.allow")
        }
        // Written as they are: gathering head and body into one buffer first held more copies of the body.
        if options.include { StandardStream.write(Array(head(response).utf8)) }
        StandardStream.write(response.body)
        if response.status >= 400 { throw ToolFailure(.httpError, "HTTP \(response.status) from \(Origin(url: options.url)?.description ?? options.url)") }
        return ""
    }

    /// The request the options describe: curl's defaults (GET, POST with a body).
    static func request(_ options: ToolCommand.FetchOptions) throws(ToolFailure) -> FetchRequest {
        var body: [UInt8]?
        if let data = options.data { body = try bytes(data, binary: options.binary) }
        var request = FetchRequest(method: options.method ?? (body == nil ? "GET" : "POST"), url: options.url, body: body)
        for line in options.headers {
            guard let colon = line.firstIndex(of: ":") else { throw ToolFailure(.usage, "-H wants 'Name: value', got '\(line)'") }
            let (name, value) = (HTTPText.trimmingWhitespace(line[..<colon]), HTTPText.trimmingWhitespace(line[line.index(after: colon)...]))
            // The checks the RPC's fetch makes, so the two entry points send the same requests.
            switch FetchRequest.refusal(name: name, value: value) {
            case .notAToken?: throw ToolFailure(.usage, "-H: a header name must be an HTTP token (no spaces, CR, LF or separators)")
            case .unsafeValue?: throw ToolFailure(.usage, "-H: the value of \(name) contains CR, LF or NUL")
            case .reserved?:
                throw ToolFailure(.usage, "-H: \(name) is set by the agent (Host, Content-Length, Transfer-Encoding, Connection, TE, "
                                  + "Upgrade and Proxy-* cannot be given)")
            case nil: request.headers.append((name, value))
            }
        }
        if body != nil, !request.headers.contains(where: { $0.0.lowercased() == "content-type" }) {
            request.headers.append(("Content-Type", "application/x-www-form-urlencoded"))  // as curl -d sends it
        }
        guard Origin(url: request.url) != nil else { throw ToolFailure(.usage, "fetch needs an absolute http or https URL, got '\(options.url)'") }
        return request
    }

    private static func bytes(_ data: String, binary: Bool) throws(ToolFailure) -> [UInt8] {
        guard data.hasPrefix("@") else { return Array(data.utf8) }
        let path = String(data.dropFirst())
        let contents: Data?
        if path == "-" {
            contents = StandardStream.readAll().map { Data($0) }
        } else {
            contents = FileManager.default.contents(atPath: path)
        }
        guard let contents else { throw ToolFailure(.usage, "cannot read \(path)") }
        return binary ? Array(contents) : contents.filter { $0 != 0x0A && $0 != 0x0D }
    }

    /// `-i`: the status line and headers, as curl shows them.
    static func head(_ response: FetchResponse) -> String {
        var text = "HTTP/1.1 \(response.status)\r\n"
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        return text + "\r\n"
    }
}
