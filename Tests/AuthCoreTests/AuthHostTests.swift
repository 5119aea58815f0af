@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Locking
import Logging
import TestSupport
import XCTest

/// A host's subscription and account selections live in its connection's `AuthHost`: once a
/// socket connection closes, the agent keeps nothing of it.
final class AuthHostTests: XCTestCase {
    private var directory: TemporaryDirectory!

    override func setUpWithError() throws { directory = try TemporaryDirectory(prefix: "authhost") }
    override func tearDown() { directory.remove() }

    private final class WeakHost: @unchecked Sendable {
        weak var host: AuthHost?
        init(_ host: AuthHost) { self.host = host }
    }

    func testAClosedSocketConnectionsSubscriptionAndSelectionsAreFreed() throws {
        let pat = ProviderConfig(id: "pat", displayName: "Personal token", flow: .token, origins: [Origin(url: "https://api.example.com")!])
        let subscriptions = Subscriptions()
        let logger = Logger(level: .error, sink: { _ in })
        let service = AuthService(config: AgentConfig(store: .memory, providers: [pat]), store: MemorySessionStore(), transport: SystemHTTPTransport(),
                                  logger: logger, lockTimeout: 1, events: { subscriptions.deliver($0) })
        var registry = MethodRegistry()
        AuthMethods.register(into: &registry, service: service)
        let path = directory.path + "/run/agent.sock"
        try UnixSocket.prepareDirectory(of: path)
        let hosts = Locked<[WeakHost]>([])
        let server = SocketServer(path: path, listener: try UnixSocket.listen(at: path), maxLineBytes: 1 << 16, logger: logger) { [registry] output, onExit in
            let host = AuthHost(subscriptions: subscriptions)
            hosts.withLock { $0.append(WeakHost(host)) }
            return RPCConnection(registry: registry, output: output, logger: logger, session: host, onExit: onExit)
        }
        XCTAssertTrue(server.start())
        defer { server.stop(timeout: 1) }

        let fd = try UnixSocket.connect(to: path, timeout: 5)
        XCTAssertNotNil(call(fd, 1, "login", ["provider": "pat", "credentials": ["token": "pasted-secret"]])["result"])
        XCTAssertEqual(call(fd, 2, "selectAccount", ["provider": "pat", "account": "default"])["result"]?["account"], "default")
        XCTAssertNotNil(call(fd, 3, "subscribe", ["providers": ["pat"]])["result"])
        XCTAssertEqual(subscriptions.count, 1)
        XCTAssertEqual(hosts.current.first?.host?.selected, ["pat": "default"])

        close(fd)
        let deadline = Date().addingTimeInterval(5)
        while (server.openConnections > 0 || hosts.current.first?.host != nil) && Date() < deadline { usleep(5_000) }
        XCTAssertEqual(server.openConnections, 0)
        XCTAssertEqual(subscriptions.count, 0, "the closed connection left the subscribed hosts")
        XCTAssertNil(hosts.current.first?.host, "the host, and its selections with it, was freed with its connection")
    }

    /// Sends a request and reads lines until its answer (skipping notifications).
    private func call(_ fd: Int32, _ id: Int, _ method: String, _ params: JSONValue) -> JSONValue {
        let line = JSONSerializer.string(["jsonrpc": "2.0", "id": .int(Int64(id)), "method": .string(method), "params": params]) + "\n"
        _ = line.withCString { write(fd, $0, strlen($0)) }
        while true {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while read(fd, &byte, 1) == 1 && byte != 0x0A { bytes.append(byte) }
            guard !bytes.isEmpty, let message = try? JSONParser.parse(bytes) else { return .null }
            if message["id"] == .int(Int64(id)) { return message }
        }
    }
}
