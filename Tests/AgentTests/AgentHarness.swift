import DevIssuer
import Foundation
import JSON
import TestSupport
import XCTest

/// A dev issuer plus agents configured against it, for tests that need more
/// than a transcript can say (concurrency, timing, several processes).
final class AgentHarness {
    let issuer: DevIssuer
    let directory: URL
    let configPath: URL
    /// Added to every spawned agent's environment (a test session bus, for the keyring store).
    let environment: [String: String]

    /// - Parameter storeKind: `store.kind`, with `path` always the harness's store directory.
    init(issuerOptions: DevIssuerOptions = .init(), refreshWindowSeconds: Int = 60, lockTimeoutSeconds: Int = 15,
         storeKind: String = "file", environment: [String: String] = [:]) throws {
        self.environment = environment
        issuer = DevIssuer(options: issuerOptions)
        _ = try issuer.start(port: 0)
        directory = try TemporaryDirectory(prefix: "auth-agent-harness").url
        configPath = directory.appendingPathComponent("config.json")
        let base = issuer.baseURL
        let config: JSONValue = [
            "refreshWindowSeconds": .int(Int64(refreshWindowSeconds)),
            "lockTimeoutSeconds": .int(Int64(lockTimeoutSeconds)),
            "store": ["kind": .string(storeKind), "path": .string(directory.appendingPathComponent("store").path)],
            "providers": [
                ["id": "corp", "displayName": "Corp SSO", "flow": "password", "origins": [.string(base)],
                 "tokenEndpoint": .string(base + "/token"), "revocationEndpoint": .string(base + "/revoke"), "clientId": "cli"],
            ],
        ]
        try Data(JSONSerializer.bytes(config)).write(to: configPath)
    }

    deinit {
        issuer.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func spawn() throws -> AgentProcess {
        try AgentProcess(arguments: ["--config", configPath.path], environment: environment.merging(["XDG_STATE_HOME": directory.path]) { _, new in new })
    }

    var storeDirectory: URL { directory.appendingPathComponent("store") }

    static let corp: JSONValue = ["provider": "corp", "credentials": ["username": "alice", "password": "wonderland"]]
}

extension AgentProcess {
    /// Sends a request and returns its answer, skipping (and collecting) notifications.
    @discardableResult
    func call(_ method: String, _ params: JSONValue = [:], id: JSONValue = "call", notifications: inout [JSONValue]) throws -> JSONValue {
        try send(JSONSerializer.string(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": params]))
        while let line = nextLine(timeout: 15) {
            let message = try JSONParser.parse([UInt8](line))
            if message["id"] == id { return message }
            notifications.append(message)
        }
        throw AgentGone(description: "no answer to \(method) within 15 s; the agent's stderr:\n\(stderr)")
    }

    @discardableResult
    func call(_ method: String, _ params: JSONValue = [:], id: JSONValue = "call") throws -> JSONValue {
        var ignored: [JSONValue] = []
        return try call(method, params, id: id, notifications: &ignored)
    }
}
