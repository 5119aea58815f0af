@testable import AuthCore
import XCTest

final class FetchResponseTests: XCTestCase {
    private func response(contentType: String?) -> FetchResponse {
        FetchResponse(status: 200, headers: contentType.map { ["content-type": $0] } ?? [:], body: Array("hi".utf8),
                      provider: nil, signed: false, retried: false)
    }

    func testTextualContentTypes() {
        XCTAssertEqual(response(contentType: " Text/Plain ; charset=utf-8").textBody, "hi")
        XCTAssertEqual(response(contentType: "application/problem+json").textBody, "hi")
        XCTAssertNil(response(contentType: "application/octet-stream").textBody)
        XCTAssertNil(response(contentType: nil).textBody)
    }

    /// A server that sends `Content-Type:` with nothing, or only parameters, gets base64, not a crash.
    func testAnEmptyOrParameterOnlyContentTypeIsNotText() {
        XCTAssertNil(response(contentType: "").textBody)
        XCTAssertNil(response(contentType: ";charset=utf-8").textBody)
        XCTAssertNil(response(contentType: "; text/plain").textBody)
    }

    /// Headers over their own limit name that limit (they were "larger than 10485760 bytes", the body's);
    /// a TLS failure says TLS (it was "could not be reached").
    func testTransportFailuresAreWordedByWhatFailed() {
        let url = "https://api.example.com/x?token=SECRET"
        let headers = AuthService.fetchError(.headersTooLarge(limit: 65536), url: url, limit: 10 << 20)
        XCTAssertEqual(headers.code, .responseTooLarge)
        XCTAssertEqual(headers.message, "The response headers are larger than 65536 bytes.")
        let tls = AuthService.fetchError(.tlsFailed("api.example.com"), url: url, limit: 10 << 20)
        XCTAssertEqual(tls.code, .requestFailed)
        XCTAssertEqual(tls.message, "The request was not completed: the TLS handshake with https://api.example.com failed or its certificate was not accepted.")
        XCTAssertEqual(HTTPCalls.describe(HTTPTransportError.tlsFailed("api.example.com"), url: url),
                       "the TLS handshake with https://api.example.com failed or its certificate was not accepted")
    }
}
