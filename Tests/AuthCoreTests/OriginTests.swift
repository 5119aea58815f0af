import XCTest
@testable import AuthCore

final class OriginTests: XCTestCase {
    func testParsesAndNormalises() throws {
        let o = try XCTUnwrap(Origin(url: "HTTPS://API.Example.COM/path?q#f"))
        XCTAssertEqual(o.scheme, "https")
        XCTAssertEqual(o.host, "api.example.com")
        XCTAssertEqual(o.port, 443)
        XCTAssertEqual(o.description, "https://api.example.com")
    }

    func testDefaultPortsAreExplicitAndEqual() {
        XCTAssertEqual(Origin(url: "https://a.com"), Origin(url: "https://a.com:443/"))
        XCTAssertEqual(Origin(url: "http://localhost"), Origin(url: "http://localhost:80"))
        XCTAssertNotEqual(Origin(url: "https://a.com"), Origin(url: "http://a.com"))
        XCTAssertEqual(Origin(url: "http://localhost:8080")?.description, "http://localhost:8080")
        XCTAssertEqual(Origin(url: "http://a.com:443")?.port, 443)
        XCTAssertEqual(Origin(url: "http://a.com:443")?.description, "http://a.com:443")
    }

    func testUserinfoEndsAtLastAt() {
        XCTAssertEqual(Origin(url: "https://api.example.com@evil.com")?.host, "evil.com")
        XCTAssertEqual(Origin(url: "https://a@b@evil.com/x")?.host, "evil.com")
        XCTAssertEqual(Origin(url: "https://user:pw@api.example.com:8443/")?.port, 8443)
    }

    func testIPv6IsCanonicalised() {
        XCTAssertEqual(Origin(url: "http://[::1]:8080/")?.host, "[::1]")
        XCTAssertEqual(Origin(url: "http://[0:0:0:0:0:0:0:1]:8080/")?.host, "[::1]")
        XCTAssertEqual(Origin(url: "https://[2001:DB8::1]/")?.host, "[2001:db8::1]")
        XCTAssertNil(Origin(url: "http://[::1"))
        XCTAssertNil(Origin(url: "http://[::g]/"))
        XCTAssertNil(Origin(url: "http://[fe80::1%25eth0]/"))
        XCTAssertNil(Origin(url: "http://[::1]x/"))
    }

    func testRejects() {
        let bad = [
            "", "https:", "https:/a.com", "https://", "https:///x", "ftp://a.com", "javascript:alert(1)",
            "a.com", "//a.com", "https://a.com:0", "https://a.com:65536", "https://a.com:", "https://a.com:8a",
            "https://a.com:123456", "https://a com", "https://a.com\t", "https://a.com\\@b.com", "https:\\\\a.com",
            "https://a%2ecom", "https://ä.com", "https://.a.com", "https://a..com", "https://a.com:1:2",
            "http://127.1/", "http://2130706433/", "http://0x7f.0.0.1/", "http://127.0.0.01/", "http://127.0.0.1./",
            "https://a.com/\u{0}", "https://a.com/\u{200B}", "https://a.com/\u{2028}", "https://a<b.com",
        ]
        for url in bad { XCTAssertNil(Origin(url: url), url.debugDescription) }
    }

    func testAcceptsPathsWithUnicodeAndTrailingDotHostDistinct() {
        XCTAssertEqual(Origin(url: "https://a.com/ü?x=ä")?.host, "a.com")
        XCTAssertEqual(Origin(url: "https://a.com./")?.host, "a.com.")
        XCTAssertNotEqual(Origin(url: "https://a.com./"), Origin(url: "https://a.com/"))
    }

    func testLoopbackAndBearerSafety() {
        for url in ["http://127.0.0.1:8080", "http://127.255.0.9", "http://[::1]", "http://localhost:3000"] {
            XCTAssertEqual(Origin(url: url)?.isLoopback, true, url)
            XCTAssertEqual(Origin(url: url)?.isSecureForBearer, true, url)
        }
        for url in ["http://128.0.0.1", "http://localhost.evil.com", "http://[::2]", "http://10.0.0.1"] {
            XCTAssertEqual(Origin(url: url)?.isLoopback, false, url)
            XCTAssertEqual(Origin(url: url)?.isSecureForBearer, false, url)
        }
        XCTAssertEqual(Origin(url: "https://example.com")?.isSecureForBearer, true)
    }
}

final class OriginCacheTests: XCTestCase {
    /// The cache must give exactly what parsing gives, for tricky URLs and on repeat.
    func testAgreesWithOriginParsing() {
        let urls = [
            "https://api.example.com/v1/items?page=2", "https://API.example.com:443/x", "https://api.example.com.evil.com/",
            "https://api.example.com@evil.com/", "https://evil.com#@api.example.com", "https://evil.com?@api.example.com",
            "https://evil.com\\@api.example.com", "https://api.example.com/a b", "http://127.0.0.1:8080", "http://[::1]:9/x",
            "https://user:pw@api.example.com/", "api.example.com/x", "javascript:alert(1)//api.example.com", "", "https:/x",
            "https://api.example.com:99999/", "https://api.example.com./", "https://api.example.com/\u{2028}",
        ]
        let cache = OriginCache(capacity: 4)
        for _ in 0..<3 {
            for url in urls {
                XCTAssertEqual(cache.origin(of: url), Origin(url: url), url)
            }
        }
        XCTAssertEqual(OriginCache.authorityPrefix("https://a.example.com:8/p?q#f"), "https://a.example.com:8")
        XCTAssertEqual(OriginCache.authorityPrefix("https://a.example.com?q=/p#f"), "https://a.example.com")
        XCTAssertEqual(OriginCache.authorityPrefix("https://a.example.com#f?q"), "https://a.example.com")
        XCTAssertNil(OriginCache.authorityPrefix("mailto:x@y"))
    }

    /// A query or fragment leaves the URL on its origin's cached route (one entry, the
    /// same answer as parsing), whatever it holds: '@', ':', '/', '?', '#', '%' after the
    /// authority never move the cut, however the runs of URLs interleave (issue 21: a
    /// query must cost what none costs).
    func testQueriesAndFragmentsShareTheirOriginsEntry() {
        let urls = [
            "https://api.example.com/v1/items", "https://api.example.com/v1/items?page=2", "https://api.example.com?page=2",
            "https://api.example.com#top", "https://api.example.com/?a=b&c=%20d#e", "https://api.example.com/x?next=https://evil.com/",
            "https://api.example.com?@evil.com", "https://api.example.com#@evil.com:8", "https://api.example.com/p?q#f?g#h",
            "https://api.example.com:443/p?page=2", "https://api.example.com?", "https://api.example.com#",
        ]
        final class Count: @unchecked Sendable { var value = 0 }  // the cache resolves on the caller's thread: this one
        let resolved = Count()
        let cache = OriginCache<Origin?>(capacity: 4) { origin in
            resolved.value += 1
            return origin
        }
        for _ in 0..<3 {
            for url in urls {
                XCTAssertEqual(cache.value(for: url), Origin(url: url), url)
                XCTAssertEqual(Origin(url: url), Origin(url: "https://api.example.com"), url)
            }
        }
        // Two prefixes: with and without the explicit default port.
        XCTAssertEqual(resolved.value, 2)
    }
}
