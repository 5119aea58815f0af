import XCTest
@testable import AuthCore

/// The checks both transports (curl on Linux, URLSession elsewhere) make before sending: one
/// function, so a request one of them refuses the other refuses too. Before issue 21 the curl
/// transport refused a method with `:` and URLSession sent it.
final class HTTPRequestChecksTests: XCTestCase {
    func testMethodIsAnRFC9110Token() {
        for good in ["GET", "POST", "PATCH", "M-SEARCH", "x_y.z~!#$%&'*+^`|"] {
            XCTAssertTrue(HTTPRequestChecks.isMethod(good), good)
        }
        for bad in ["", "GE T", "GET:", "G\r\nX", "GET\t", "(GET)", "G/ET", "PÖST", "GET\u{7F}"] {
            XCTAssertFalse(HTTPRequestChecks.isMethod(bad), bad)
        }
    }

    /// The transports accept exactly the methods the RPC's `fetch` and `-X` accept.
    func testTransportsAndFetchAgreeOnEveryASCIIByte() {
        for byte in UInt8(0)..<128 {
            let method = "G" + String(UnicodeScalar(byte))
            XCTAssertEqual(HTTPRequestChecks.isMethod(method), FetchRequest.isMethod(method), "byte \(byte)")
        }
    }

    func testCheckedRefusesWhatWouldSplitOrMisrouteTheRequest() throws {
        let origin = try HTTPRequestChecks.checked(HTTPRequest(method: "PATCH", url: "https://a.example:8443/x?y=1", timeout: 1)).origin
        XCTAssertEqual(origin, Origin(url: "https://a.example:8443/"))
        for request in [HTTPRequest(method: "GE:T", url: "https://a.example/", timeout: 1),
                        HTTPRequest(method: "", url: "https://a.example/", timeout: 1),
                        HTTPRequest(url: "ftp://a.example/", timeout: 1),
                        HTTPRequest(url: "https://a.example/", headers: [("X", "a\r\nY: b")], timeout: 1)] {
            XCTAssertThrowsError(try HTTPRequestChecks.checked(request)) { XCTAssertEqual($0 as? HTTPTransportError, .invalidURL) }
        }
        XCTAssertThrowsError(try HTTPRequestChecks.checked(HTTPRequest(url: "https://a.example/", timeout: 0))) {
            XCTAssertEqual($0 as? HTTPTransportError, .timedOut)
        }
    }

    /// The system transport goes through the same check: nothing reaches the network.
    func testSystemTransportRefusesAMethodThatIsNotAToken() async {
        do {
            _ = try await SystemHTTPTransport().send(HTTPRequest(method: "GE:T", url: "http://127.0.0.1:9/", timeout: 1))
            XCTFail("a method with ':' must be refused")
        } catch {
            XCTAssertEqual(error as? HTTPTransportError, .invalidURL)
        }
    }
}
