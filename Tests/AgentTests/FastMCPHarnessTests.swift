#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import JSON
import XCTest

/// The FastMCP harness itself (Tests/MCP, FastMCPServer): that the server is the
/// protected MCP server the agent's tests rely on — a `401` naming its RFC 9728
/// metadata, registration, `/authorize` approving at once, requests counted — so
/// a failure in the agent's FastMCP tests is about the agent, not the harness.
/// Skipped where python3's venv or PyPI is missing, or with AUTH_AGENT_SKIP_FASTMCP=1.
final class FastMCPHarnessTests: XCTestCase {
    private static let lock = NSLock()
    nonisolated(unsafe) private static var started: Result<FastMCPServer, Error>?

    /// One server for the class: installing and starting FastMCP takes seconds.
    private func server() throws -> FastMCPServer {
        Self.lock.lock()
        defer { Self.lock.unlock() }
        if Self.started == nil { Self.started = Result { try FastMCPServer.start() } }
        return try Self.started!.get()
    }

    override class func tearDown() {
        lock.lock()
        if case .success(let server)? = started { server.stop() }
        started = nil
        lock.unlock()
        super.tearDown()
    }

    func testUnauthenticatedPostIsAnswered401WithResourceMetadata() throws {
        let server = try server()
        server.resetRequestLog()
        let answer = try Browser(timeout: 5).fetch("POST", try XCTUnwrap(URL(string: server.mcpURL)), form: [],
                                                   headers: [("Accept", "application/json, text/event-stream")])
        XCTAssertEqual(answer.status, 401)
        let challenge = try XCTUnwrap(answer.headers["www-authenticate"])
        XCTAssertTrue(challenge.hasPrefix("Bearer "), challenge)
        XCTAssertTrue(challenge.contains("resource_metadata=\"\(server["resourceMetadataUrl"])\""), challenge)
        XCTAssertTrue(challenge.contains("scope=\"mcp:read\""), challenge)
        XCTAssertEqual(server.count("/mcp", method: "POST"), 1, "\(server.requests())")

        let metadata = try json(Browser(timeout: 5).fetch("GET", try XCTUnwrap(URL(string: server["resourceMetadataUrl"])), form: nil))
        XCTAssertEqual(metadata["resource"]?.stringValue, server.mcpURL, "RFC 9728 §3.3: the resource it protects")
        XCTAssertEqual(metadata["authorization_servers"]?.arrayValue?.first?.stringValue, server["issuer"])
        let issuer = try json(Browser(timeout: 5).fetch("GET", try XCTUnwrap(URL(string: server["serverMetadataUrl"])), form: nil))
        XCTAssertEqual(issuer["issuer"]?.stringValue, server["issuer"], "FastMCP's issuer ends with a slash")
        XCTAssertNotNil(issuer["registration_endpoint"]?.stringValue)
        XCTAssertEqual(server.count("/.well-known/"), 2)
    }

    /// What a test of the agent does after the agent's `loginPrompt`: `approve` the URL,
    /// which must end on the redirect URI's loopback listener with a code and the state.
    func testApproveFollowsAuthorizeToTheLoopbackListener() throws {
        let server = try server()
        let listener = try OneShotListener()
        let redirect = "http://127.0.0.1:\(listener.port)/callback"
        let registration = try postJSON(server.baseURL + "/register", [
            "redirect_uris": [.string(redirect)], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code", "refresh_token"], "client_name": "auth-agent tests", "scope": "mcp:read",
        ])
        XCTAssertEqual(registration.status, 201, "\(registration.body)")
        let clientID = try XCTUnwrap(registration.body["client_id"]?.stringValue)
        var authorize = try XCTUnwrap(URLComponents(string: server.baseURL + "/authorize"))
        authorize.queryItems = [
            .init(name: "response_type", value: "code"), .init(name: "client_id", value: clientID),
            .init(name: "redirect_uri", value: redirect), .init(name: "state", value: "state-1"),
            .init(name: "code_challenge", value: String(repeating: "A", count: 43)), .init(name: "code_challenge_method", value: "S256"),
            .init(name: "scope", value: "mcp:read"), .init(name: "resource", value: server.mcpURL),
        ]
        let page = try FastMCPServer.approve(try XCTUnwrap(authorize.url?.absoluteString))
        XCTAssertEqual(page.status, 200)
        let landed = try XCTUnwrap(listener.requestLine())
        XCTAssertTrue(landed.hasPrefix("GET /callback?code="), landed)
        XCTAssertTrue(landed.contains("state=state-1"), landed)
        XCTAssertEqual(server.count("/register"), 1)
        XCTAssertEqual(server.count("/authorize"), 1)
    }

    func testAccessTokenLifetimeCanBeShortenedAtRunTime() throws {
        let server = try server()
        try server.setAccessTokenLifetime(5)
        try server.setAccessTokenLifetime(3600)
        XCTAssertEqual(server.requests().filter { $0.path == "/_test/access-token-lifetime" }.map(\.status), [200, 200],
                       "the test route is outside the protected endpoint")
    }

    // MARK: Helpers

    private func json(_ response: Browser.Response) throws -> JSONValue {
        XCTAssertEqual(response.status, 200, "\(response.url): \(response.body)")
        return try JSONParser.parse(Array(response.body.utf8))
    }

    private func postJSON(_ url: String, _ body: JSONValue) throws -> (status: Int, body: JSONValue) {
        var request = URLRequest(url: try XCTUnwrap(URL(string: url)), timeoutInterval: 5)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(JSONSerializer.bytes(body))
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var answer: (Data?, URLResponse?)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            answer = (data, response)
            done.signal()
        }.resume()
        XCTAssertEqual(done.wait(timeout: .now() + 6), .success)
        let status = (answer.1 as? HTTPURLResponse)?.statusCode ?? 0
        return (status, (try? JSONParser.parse([UInt8](answer.0 ?? Data()))) ?? .null)
    }
}

/// A loopback socket that answers one HTTP request with 200 and keeps its request
/// line: the stand-in for the agent's redirect listener.
private final class OneShotListener: @unchecked Sendable {
    let port: UInt16
    private let fd: Int32
    private let received = DispatchSemaphore(value: 0)
    private var line: String?

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw FastMCPServer.StartFailure(description: "cannot listen on 127.0.0.1")
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    deinit { close(fd) }

    private func serve() {
        let connection = accept(fd, nil, nil)
        guard connection >= 0 else { return }
        defer { close(connection) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = read(connection, &buffer, buffer.count)
        let request = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        line = request.split(separator: "\r\n").first.map(String.init)
        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
        _ = answer.utf8CString.withUnsafeBufferPointer { write(connection, $0.baseAddress, $0.count - 1) }
        received.signal()
    }

    /// The request line the listener got, waiting up to 5 s for it.
    func requestLine() -> String? {
        received.wait(timeout: .now() + 5) == .success ? line : nil
    }
}
