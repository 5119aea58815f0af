#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import JSON
import XCTest

/// FastMCP (`Tests/MCP/start-server.sh`): a protected MCP server written by
/// others, with RFC 9728 and RFC 8414 metadata, RFC 7591 registration, PKCE and
/// rotating refresh tokens, started in a process group of its own so that
/// stopping it ends the script, pip and the server alike. Its `/authorize`
/// approves at once, so `approve(_:)` is the whole "browser".
///
/// Every HTTP request the server answers is logged, so a test can count the
/// discovery, registration and token requests the agent made (`count`).
final class FastMCPServer: @unchecked Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("MCP/start-server.sh")

    /// The JSON line the script wrote: `baseUrl`, `mcpUrl`, `resourceMetadataUrl`,
    /// `serverMetadataUrl`, `issuer` (with FastMCP's trailing slash), `requiredScopes`, `validScopes`.
    var info: JSONValue { process.info }
    private let process: InteropServer
    private let requestLog: URL

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// One line of the request log.
    struct Request: Equatable, CustomStringConvertible {
        let method: String
        let path: String
        let status: Int
        /// A token request's `grant_type` (`authorization_code`, `refresh_token`); nil for other requests.
        let grant: String?
        var description: String { "\(method) \(path) \(status)" + (grant.map { " " + $0 } ?? "") }
    }

    /// Runs the script (installing the virtualenv the first time, which takes a minute)
    /// and waits, bounded, until the server answers its metadata. Throws `XCTSkip`
    /// when python3's venv or PyPI is unavailable, or with AUTH_AGENT_SKIP_FASTMCP=1.
    /// `environment` takes the script's variables, e.g. `FASTMCP_ACCESS_TOKEN_LIFETIME`
    /// or `FASTMCP_REQUIRED_SCOPES`.
    static func start(environment: [String: String] = [:], installTimeout: TimeInterval = 300, readyTimeout: TimeInterval = 30) throws -> FastMCPServer {
        if ProcessInfo.processInfo.environment["AUTH_AGENT_SKIP_FASTMCP"] == "1" {
            throw XCTSkip("FastMCP tests turned off by AUTH_AGENT_SKIP_FASTMCP=1")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-fastmcp-test-\(UUID().uuidString)")
        let requestLog = directory.appendingPathComponent("requests.log")
        var merged = environment
        merged["FASTMCP_REQUEST_LOG"] = requestLog.path
        merged["FASTMCP_PARENT_PID"] = String(getpid())
        let process = try InteropServer.start(
            script: script, skips: [3: "python3 -m venv is unavailable here", 4: "installing fastmcp from PyPI failed"],
            skipLabel: "FastMCP", readyKey: "serverMetadataUrl", directory: directory, environment: merged,
            installTimeout: installTimeout, readyTimeout: readyTimeout)
        let server = FastMCPServer(process: process, requestLog: requestLog)
        server.resetRequestLog()
        return server
    }

    /// One server for a whole test class, started by the first test that asks and stopped in the
    /// class's `tearDown` (a start and stop take 1.7 s on two cores); a failed start fails (or skips)
    /// every test alike. For tests that need no fresh server: each asks for it with its request log
    /// emptied and the default token lifetime, and registers (or learns) a client of its own.
    final class Shared: @unchecked Sendable {
        private let lock = NSLock()
        private var started: Result<FastMCPServer, Error>?
        private let environment: [String: String]

        /// `environment`: the script's variables for this class's server (`FASTMCP_REVISIONS`).
        init(environment: [String: String] = [:]) { self.environment = environment }

        func server() throws -> FastMCPServer {
            let server = try lock.withLock {
                if started == nil { started = Result { [environment] in try FastMCPServer.start(environment: environment) } }
                return try started!.get()
            }
            try server.setAccessTokenLifetime(3600)
            server.resetRequestLog()
            return server
        }

        func stop() {
            lock.withLock {
                if case .success(let server)? = started { server.stop() }
                started = nil
            }
        }
    }

    private init(process: InteropServer, requestLog: URL) {
        self.process = process
        self.requestLog = requestLog
    }

    subscript(_ key: String) -> String {
        info[key]?.stringValue ?? ""
    }

    /// `http://127.0.0.1:PORT/mcp`, the protected resource.
    var mcpURL: String { self["mcpUrl"] }
    var baseURL: String { self["baseUrl"] }

    // MARK: Counting requests

    /// Every request answered since the start (or the last `resetRequestLog`), in order.
    func requests() -> [Request] {
        let text = (try? String(contentsOf: requestLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3 || parts.count == 4, let status = Int(parts[2]) else { return nil }
            return Request(method: String(parts[0]), path: String(parts[1]), status: status, grant: parts.count == 4 ? String(parts[3]) : nil)
        }
    }

    /// How many requests went to `path` (exactly, or every path under `/.well-known/`
    /// when `path` is `"/.well-known/"`), optionally only with `method`, or only token
    /// requests with `grant` (`count("/token", grant: "refresh_token")`: the refreshes).
    func count(_ path: String, method: String? = nil, grant: String? = nil) -> Int {
        requests().filter { request in
            (path.hasSuffix("/") ? request.path.hasPrefix(path) : request.path == path)
                && (method == nil || request.method == method) && (grant == nil || request.grant == grant)
        }.count
    }

    /// Empties the log in place (the server appends to its open file, so it continues at the
    /// start; replacing the file, as `FileManager.createFile` does, would lose every later line).
    func resetRequestLog() {
        _ = truncate(requestLog.path, 0)
    }

    // MARK: Driving it

    /// Access tokens issued from now on live `seconds` (FastMCP's module constant, one hour by default).
    func setAccessTokenLifetime(_ seconds: Int) throws {
        guard let url = URL(string: baseURL + "/_test/access-token-lifetime") else { throw StartFailure(description: "no base URL") }
        let answer = try Browser(timeout: 5).fetch("POST", url, form: [("seconds", String(seconds))])
        guard answer.status == 200 else { throw StartFailure(description: "setting the token lifetime answered \(answer.status): \(answer.body)") }
    }

    /// Plays the person's browser: FastMCP's `/authorize` approves at once with a 302
    /// to the redirect URI, so GET the authorization URL the agent prompted with and
    /// follow it to the agent's loopback listener. Returns the listener's page.
    @discardableResult
    static func approve(_ authorizationURL: String) throws -> Browser.Response {
        let browser = Browser(timeout: 10)
        let page = try browser.navigate(authorizationURL)
        guard browser.trail.count >= 2, page.url.host == "127.0.0.1" || page.url.host == "[::1]" || page.url.host == "::1" else {
            throw StartFailure(description: "the authorization did not end on a loopback listener:\n  " + browser.trail.joined(separator: "\n  "))
        }
        return page
    }

    /// TERM to the whole group, KILL after 5 s, then reap; removes the temp directory. Idempotent.
    func stop() { process.stop() }
}
