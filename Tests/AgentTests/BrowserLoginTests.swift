import DevIssuer
import Foundation
import JSON
import XCTest

/// Browser-login paths a transcript cannot express: a forged callback.
final class BrowserLoginTests: XCTestCase {
    func testCallbackWithAWrongStateIsRefused() throws {
        let issuer = DevIssuer()
        _ = try issuer.start(port: 0)
        defer { issuer.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config: JSONValue = [
            "store": ["kind": "memory"],
            "providers": [["id": "web", "displayName": "Web", "flow": "authorizationCode", "origins": ["https://web.example.com"],
                           "issuer": .string(issuer.baseURL), "clientId": "cli"]],
        ]
        let path = directory.appendingPathComponent("config.json")
        try Data(JSONSerializer.bytes(config)).write(to: path)
        let agent = try AgentConversation(arguments: ["--config", path.path])
        let login = try agent.send("login", ["provider": "web"])
        let prompt = try agent.notification("loginPrompt")
        let url = try XCTUnwrap(URLComponents(string: prompt["params"]?["url"]?.stringValue ?? ""))
        let redirect = try XCTUnwrap(url.queryItems?.first { $0.name == "redirect_uri" }?.value)
        XCTAssertTrue(redirect.hasPrefix("http://127.0.0.1:") && redirect.hasSuffix("/callback"), redirect)

        // A page that tries to complete someone's login with its own code.
        let forged = URL(string: redirect + "?code=attacker-code&state=not-the-state")!
        let page = try Browser(timeout: 10).navigate(forged.absoluteString).body
        XCTAssertTrue(page.contains("not the one the application is waiting for"), page)

        let answer = try agent.answer(to: login)
        XCTAssertEqual(answer["error"]?["code"], 1008, "\(answer)")
        XCTAssertEqual(answer["error"]?["data"]?["reason"], "loginDenied")
        XCTAssertEqual(issuer.count("token.authorization_code"), 0, "the forged code was never exchanged")
    }
}
