import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import XCTest
@testable import AuthCore

/// `config add` / `config remove` edit the file as a document: other providers and keys are kept,
/// the result is validated before it is written, and the write is atomic with private modes.
final class ConfigFileTests: XCTestCase {
    static let existing = """
        {"$schema": "https://example.com/s.json", "refreshWindowSeconds": 90,
         "providers": [{"id": "api", "displayName": "API", "flow": "token", "origins": ["https://api.example.com"], "gitUsername": "x"}],
         "store": {"kind": "file"}}
        """

    private let corp: JSONObject = ["id": "corp", "flow": "deviceCode", "origins": ["https://corp.example.com"],
                                    "issuer": "https://sso.example.com", "clientId": "cli", "scopes": ["openid"]]

    func testAddingKeepsEverythingElse() throws {
        let bytes = try ConfigFile.adding(corp, to: Array(Self.existing.utf8), file: "c.json")
        let root = try JSONParser.parse(bytes)
        XCTAssertEqual(root.objectValue?.keys, ["$schema", "refreshWindowSeconds", "providers", "store"], "top-level keys in their order")
        XCTAssertEqual(root["refreshWindowSeconds"], 90)
        XCTAssertEqual(root["providers"]?.arrayValue?.count, 2)
        XCTAssertEqual(root["providers"]?.arrayValue?[0], try JSONParser.parse(Self.existing)["providers"]?.arrayValue?[0], "the other provider untouched")
        XCTAssertEqual(root["providers"]?.arrayValue?[1], .object(corp))
        XCTAssertEqual(try AgentConfig.parse(bytes, file: "c.json").providers.map(\.id), ["api", "corp"])
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains("\n      \"id\": \"corp\",\n"), "indented for people")

        let fresh = try ConfigFile.adding(corp, to: nil, file: "c.json")
        XCTAssertEqual(try JSONParser.parse(fresh), ["providers": [.object(corp)]])
    }

    func testAddingRefusesWhatTheAgentWouldRefuse() {
        XCTAssertThrowsError(try ConfigFile.adding(["id": "api", "flow": "token", "origins": ["https://other.example"]],
                                                   to: Array(Self.existing.utf8), file: "c.json")) { error in
            XCTAssertTrue("\(error)".contains("already configured"), "\(error)")
        }
        XCTAssertThrowsError(try ConfigFile.adding(["id": "dup", "flow": "token", "origins": ["https://api.example.com"]],
                                                   to: Array(Self.existing.utf8), file: "c.json")) { error in
            XCTAssertTrue("\(error)".contains("already claimed"), "\(error)")
        }
        XCTAssertThrowsError(try ConfigFile.adding(corp, to: Array("{\"providers\": [".utf8), file: "c.json"), "a broken file is reported, not overwritten")
    }

    func testRemoving() throws {
        let both = try ConfigFile.adding(corp, to: Array(Self.existing.utf8), file: "c.json")
        let bytes = try ConfigFile.removing("api", from: both, file: "c.json")
        XCTAssertEqual(try AgentConfig.parse(bytes, file: "c.json").providers.map(\.id), ["corp"])
        XCTAssertEqual(try JSONParser.parse(bytes)["refreshWindowSeconds"], 90)
        XCTAssertThrowsError(try ConfigFile.removing("nosuch", from: both, file: "c.json"))
    }

    func testWriteCreatesPrivateDirectoriesAndKeepsAnExistingMode() throws {
        let root = try TemporaryDirectory(prefix: "config-file").url
        defer { try? FileManager.default.removeItem(at: root) }
        let path = root.appendingPathComponent("a/b/config.json").path
        try ConfigFile.write(Array("{}".utf8), to: path)
        func mode(_ p: String) throws -> Int { (try FileManager.default.attributesOfItem(atPath: p)[.posixPermissions] as? Int) ?? -1 }
        XCTAssertEqual(try mode(path), 0o600)
        XCTAssertEqual(try mode(root.appendingPathComponent("a/b").path), 0o700)
        XCTAssertEqual(try mode(root.appendingPathComponent("a").path), 0o700)
        chmod(path, 0o640)
        try ConfigFile.write(Array("{\"providers\": []}".utf8), to: path)
        XCTAssertEqual(try mode(path), 0o640, "an existing file keeps its mode")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), "{\"providers\": []}")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("a/b").path), ["config.json"], "no temporary file left")
    }

    /// `--log-level debug`: method, URL without query, status and milliseconds; never headers or bodies.
    func testLoggingTransportLogsOneLinePerRequestWithoutSecrets() async throws {
        let answer = FakeOAuthServer { request in
            if request.url.contains("down") { throw HTTPTransportError.unreachable("down") }
            return HTTPResponse(status: 200, body: Array("{\"access_token\":\"SECRET-TOKEN\"}".utf8))
        }
        let lines = WarningLog()
        let logged = LoggingTransport.wrapping(answer, logger: Logger(level: .debug, sink: lines.sink))
        _ = try await logged.send(HTTPRequest(method: "POST", url: "https://sso.example.com/token?code=SECRET-CODE",
                                              headers: [("Authorization", "Basic SECRET-BASIC")], body: Array("password=SECRET-PW".utf8)))
        _ = try? await logged.send(HTTPRequest(url: "https://down.example.com/x"))
        XCTAssertEqual(lines.all.count, 2)
        XCTAssertNotNil(lines.all[0].range(of: #"^auth-agent: debug: POST https://sso\.example\.com/token → 200 \(\d+ ms\)$"#, options: .regularExpression), lines.all[0])
        XCTAssertTrue(lines.all[1].hasPrefix("auth-agent: debug: GET https://down.example.com/x → https://down.example.com could not be reached ("), lines.all[1])
        XCTAssertFalse(lines.all.joined().contains("SECRET"))
        let quiet = LoggingTransport.wrapping(answer, logger: Logger(level: .info, sink: lines.sink))
        XCTAssertFalse(quiet is LoggingTransport, "no wrapper below debug")
    }
}
