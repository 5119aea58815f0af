@testable import AuthCore
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import XCTest

final class InteractiveLoginTests: XCTestCase {
    func testPKCEMatchesRFC7636AppendixB() {
        XCTAssertEqual(PKCE.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let pkce = PKCE()
        XCTAssertEqual(pkce.verifier.count, 43)
        XCTAssertTrue(pkce.verifier.utf8.allSatisfy { $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        XCTAssertNotEqual(PKCE().verifier, pkce.verifier)
        XCTAssertNotEqual(PKCE().state, pkce.state)
    }

    func testAuthorizationURL() throws {
        let pkce = PKCE()
        let url = AuthorizationCodeProvider.authorizationURL(endpoint: "https://id.example.com/authorize", clientId: "cli app",
                                                             redirectURI: "http://127.0.0.1:5000/callback", scopes: ["openid", "email"], pkce: pkce, nonce: nil)
        XCTAssertTrue(url.hasPrefix("https://id.example.com/authorize?response_type=code&client_id=cli+app&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Fcallback&scope=openid+email&state="))
        XCTAssertTrue(url.hasSuffix("&code_challenge=\(pkce.challenge)&code_challenge_method=S256"))
        XCTAssertFalse(url.contains(pkce.verifier), "the verifier never leaves the agent")
    }

    func testDiscoveredEndpointsNeverOverrideConfigurationAndMustBeSecure() {
        var config = ProviderConfig(id: "p", flow: .deviceCode)
        config.tokenEndpoint = "https://configured.example.com/token"
        var endpoints = Endpoints(config: config)
        endpoints.fill(from: ["token_endpoint": "https://discovered.example.com/token", "device_authorization_endpoint": "https://d.example.com/device",
                              "userinfo_endpoint": "http://plain.example.com/userinfo", "revocation_endpoint": "http://127.0.0.1:9/revoke"])
        XCTAssertEqual(endpoints.token, "https://configured.example.com/token")
        XCTAssertEqual(endpoints.deviceAuthorization, "https://d.example.com/device")
        XCTAssertNil(endpoints.userinfo, "plain http to a non-loopback host is refused")
        XCTAssertEqual(endpoints.revocation, "http://127.0.0.1:9/revoke")
    }

    /// The real listener on 127.0.0.1: other paths get 404, the callback is handed over and answered.
    func testLoopbackListenerHandsOverTheCallback() async throws {
        let listener = try LoopbackRedirectListener(port: 0, path: "/callback", state: "s t")
        XCTAssertGreaterThan(listener.port, 0)
        let port = listener.port
        let browser = Task.detached { () -> [String] in
            var pages: [String] = []
            for path in ["/favicon.ico", "/callback?code=abc%2F1&state=s+t"] {
                let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
                let (data, response) = try await URLSession.shared.data(from: url)
                pages.append("\((response as? HTTPURLResponse)?.statusCode ?? 0) \(String(decoding: data, as: UTF8.self))")
            }
            return pages
        }
        let callback = try await listener.callback(until: Deadline(Date().addingTimeInterval(10)), on: SystemClock())
        XCTAssertEqual(callback.query, ["code": "abc/1", "state": "s t"])
        callback.respond(true, "Signed in <b>")
        let pages = try await browser.value
        XCTAssertTrue(pages[0].hasPrefix("404"), pages[0])
        XCTAssertTrue(pages[1].hasPrefix("200"), pages[1])
        XCTAssertTrue(pages[1].contains("Signed in &lt;b&gt;"), "messages are escaped: \(pages[1])")
    }

    func testLoopbackListenerTimesOutAndCanBeCancelled() async throws {
        let listener = try LoopbackRedirectListener(port: 0, path: "/callback", state: "s")
        defer { listener.shutDown() }
        do {
            _ = try await listener.callback(until: Deadline(Date().addingTimeInterval(0.3)), on: SystemClock())
            XCTFail("no callback should arrive")
        } catch {
            guard case .timedOut = error else { return XCTFail("\(error)") }
        }
        let second = try LoopbackRedirectListener(port: 0, path: "/callback", state: "s")
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { second.shutDown() }
        do {
            _ = try await second.callback(until: Deadline(Date().addingTimeInterval(10)), on: SystemClock())
            XCTFail("shut down listeners do not wait")
        } catch {
            guard case .closed = error else { return XCTFail("\(error)") }
        }
    }
}
