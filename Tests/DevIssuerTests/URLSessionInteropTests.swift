import DevIssuer
import Foundation
import JSON
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The agent talks to issuers through URLSession; make sure its framing
/// (keep-alive, Content-Length bodies, Basic auth) works against this server.
final class URLSessionInteropTests: IssuerTestCase {
    func testURLSessionCanLogInAndRefreshOverReusedConnections() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 2
        let session = URLSession(configuration: configuration)
        defer { session.invalidateAndCancel() }
        let base = try XCTUnwrap(URL(string: issuer.baseURL))

        var request = URLRequest(url: base.appendingPathComponent("token"))
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.setValue("Basic " + Data("svc:svc-secret".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        request.httpBody = Data("grant_type=password&username=alice&password=wonderland&scope=openid".utf8)
        let (data, response) = try await session.data(for: request)
        XCTAssertEqual((response as? HTTPURLResponse)?.statusCode, 200)
        let json = try JSONParser.parse([UInt8](data))
        let refresh = try XCTUnwrap(json["refresh_token"]?.stringValue)
        XCTAssertNotNil(json["id_token"]?.stringValue)

        request.httpBody = Data("grant_type=refresh_token&refresh_token=\(formEncode(refresh))".utf8)
        let (refreshed, refreshResponse) = try await session.data(for: request)
        XCTAssertEqual((refreshResponse as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertNotEqual(try JSONParser.parse([UInt8](refreshed))["refresh_token"]?.stringValue, refresh)

        let (_, discovery) = try await session.data(from: base.appendingPathComponent(".well-known/openid-configuration"))
        XCTAssertEqual((discovery as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(issuer.counts, ["token": 2, "token.password": 1, "token.refresh_token": 1, "discovery": 1])
    }
}
