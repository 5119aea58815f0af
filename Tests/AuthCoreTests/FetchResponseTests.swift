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
}
