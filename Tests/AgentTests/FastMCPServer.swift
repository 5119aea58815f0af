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
    private(set) var info: JSONValue = .null
    private let pid: pid_t
    private let directory: URL
    private let requestLog: URL
    private let lock = NSLock()
    private var stopped = false

    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// One line of the request log.
    struct Request: Equatable, CustomStringConvertible {
        let method: String
        let path: String
        let status: Int
        var description: String { "\(method) \(path) \(status)" }
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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let infoPath = directory.appendingPathComponent("server.json").path
        let logPath = directory.appendingPathComponent("server.log").path
        let requestLog = directory.appendingPathComponent("requests.log")
        var merged = environment
        merged["FASTMCP_REQUEST_LOG"] = requestLog.path
        merged["FASTMCP_PARENT_PID"] = String(getpid())
        let pid = try InteropServer.spawnInOwnGroup(["/bin/bash", script.path, infoPath], environment: merged, log: logPath)
        let server = FastMCPServer(pid: pid, directory: directory, requestLog: requestLog)
        func log() -> String { (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(3000)) } ?? "" }

        let deadline = Date().addingTimeInterval(installTimeout)
        while !FileManager.default.fileExists(atPath: infoPath) {
            if let status = server.exitStatus() {
                server.stop()
                switch status {
                case 3: throw XCTSkip("FastMCP: python3 -m venv is unavailable here:\n\(log())")
                case 4: throw XCTSkip("FastMCP: installing fastmcp from PyPI failed:\n\(log())")
                default: throw StartFailure(description: "Tests/MCP/start-server.sh exited with \(status):\n\(log())")
                }
            }
            guard Date() < deadline else {
                server.stop()
                throw StartFailure(description: "Tests/MCP/start-server.sh did not describe the server within \(Int(installTimeout)) s:\n\(log())")
            }
            usleep(100_000)
        }
        do {
            server.info = try JSONParser.parse([UInt8](try Data(contentsOf: URL(fileURLWithPath: infoPath))))
        } catch {
            server.stop()
            throw StartFailure(description: "unreadable server description: \(error)")
        }
        guard let metadata = URL(string: server["serverMetadataUrl"]) else {
            server.stop()
            throw StartFailure(description: "the server description has no serverMetadataUrl: \(server.info)")
        }
        let browser = Browser(timeout: 2)
        let readyBy = Date().addingTimeInterval(readyTimeout)
        while (try? browser.fetch("GET", metadata, form: nil))?.status != 200 {
            if server.exitStatus() != nil || Date() > readyBy {
                server.stop()
                throw StartFailure(description: "FastMCP did not answer \(metadata) within \(Int(readyTimeout)) s:\n\(log())")
            }
            usleep(100_000)
        }
        server.resetRequestLog()
        return server
    }

    private init(pid: pid_t, directory: URL, requestLog: URL) {
        self.pid = pid
        self.directory = directory
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
            guard parts.count == 3, let status = Int(parts[2]) else { return nil }
            return Request(method: String(parts[0]), path: String(parts[1]), status: status)
        }
    }

    /// How many requests went to `path` (exactly, or every path under `/.well-known/`
    /// when `path` is `"/.well-known/"`), optionally only with `method`.
    func count(_ path: String, method: String? = nil) -> Int {
        requests().filter { request in
            (path.hasSuffix("/") ? request.path.hasPrefix(path) : request.path == path)
                && (method == nil || request.method == method)
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
    func stop() {
        lock.lock()
        let first = !stopped
        stopped = true
        lock.unlock()
        guard first else { return }
        kill(-pid, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while exitStatus() == nil && Date() < deadline { usleep(50_000) }
        kill(-pid, SIGKILL)
        if exitStatus() == nil {
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private let reaped = NSLock()
    private var exitCode: Int32?

    /// The script's exit code once it has ended (reaping it), nil while it runs.
    private func exitStatus() -> Int32? {
        reaped.lock()
        defer { reaped.unlock() }
        if let exitCode { return exitCode }
        var status: Int32 = 0
        let rc = waitpid(pid, &status, WNOHANG)
        guard rc == pid else { return rc < 0 ? -1 : nil }
        exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return exitCode
    }
}
