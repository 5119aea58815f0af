import XCTest
import AuthCore

final class OriginMatcherTests: XCTestCase {
    private func origins(_ urls: String...) -> [Origin] { urls.compactMap { Origin(url: $0) } }

    private var matcher: OriginMatcher {
        OriginMatcher([
            (provider: "api", origins: origins("https://api.example.com")),
            (provider: "local", origins: origins("http://127.0.0.1:8080")),
            (provider: "v6", origins: origins("http://[::1]:9000")),
            (provider: "dev", origins: origins("http://localhost:3000")),
            (provider: "shadow", origins: origins("https://api.example.com", "https://other.example.com")),
        ])
    }

    func testTable() {
        let table: [(String, String?)] = [
            ("https://api.example.com/v1/items", "api"),
            ("https://api.example.com", "api"),
            ("https://api.example.com.evil.com/", nil),
            ("https://api.example.com@evil.com/", nil),
            ("https://api.example.com:443@evil.com/", nil),
            ("https://evil.com:443@api.example.com/", "api"),
            ("http://api.example.com/", nil),
            ("https://API.Example.COM/x", "api"),
            ("https://api.example.com:443/", "api"),
            ("https://api.example.com:8443/", nil),
            ("https://user:pa%40ss@api.example.com/x", "api"),
            ("https://evil.com#@api.example.com", nil),
            ("https://evil.com?@api.example.com", nil),
            ("https://evil.com/@api.example.com", nil),
            ("https://api.example.com\\@evil.com", nil),
            ("https://evil.com\\@api.example.com", nil),
            ("https:\\\\api.example.com", nil),
            ("https://api.example.com./", nil),
            ("https://api.example.com%2eevil.com/", nil),
            ("https://api.example.com /x", nil),
            ("http://[::1]:9000/x", "v6"),
            ("http://[0:0:0:0:0:0:0:1]:9000/", "v6"),
            ("http://[::1]:9001/", nil),
            ("http://127.0.0.1:8080/x", "local"),
            ("http://127.0.0.1:8081/x", nil),
            ("https://127.0.0.1:8080/x", nil),
            ("http://localhost:3000/", "dev"),
            ("http://localhost/", nil),
            ("", nil),
            ("javascript:alert(1)", nil),
            ("HTTPS://api.example.com/", "api"),
            ("api.example.com/x", nil),
            ("//api.example.com/x", nil),
            ("https:api.example.com", nil),
            ("ftp://api.example.com/", nil),
            ("https://other.example.com/", "shadow"),
        ]
        XCTAssertGreaterThanOrEqual(table.count, 25)
        let m = matcher
        for (url, expected) in table {
            XCTAssertEqual(m.provider(for: url), expected, url.debugDescription)
        }
    }

    func testAllowsOnlyTheOwningProvider() {
        let m = matcher
        XCTAssertTrue(m.allows(provider: "api", url: "https://api.example.com/x"))
        XCTAssertFalse(m.allows(provider: "local", url: "https://api.example.com/x"))
        XCTAssertFalse(m.allows(provider: "shadow", url: "https://api.example.com/x"), "first provider wins")
        XCTAssertTrue(m.allows(provider: "shadow", url: "https://other.example.com/"))
        XCTAssertFalse(m.allows(provider: "api", url: "not a url"))
    }
}
