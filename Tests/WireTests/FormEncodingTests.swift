import XCTest
import Wire

final class FormEncodingTests: XCTestCase {
    private func encoded(_ pairs: [(String, String)]) -> String { String(decoding: FormEncoding.encode(pairs), as: UTF8.self) }

    func testVectors() {
        XCTAssertEqual(encoded([]), "")
        XCTAssertEqual(encoded([("grant_type", "password")]), "grant_type=password")
        XCTAssertEqual(encoded([("username", "a b"), ("password", "p+&=%ü")]), "username=a+b&password=p%2B%26%3D%25%C3%BC")
        XCTAssertEqual(encoded([("k", "AZaz09-._~")]), "k=AZaz09-._~")
        XCTAssertEqual(encoded([("scope", "openid profile")]), "scope=openid+profile")
        XCTAssertEqual(encoded([("r", "https://x/cb?a=1#f")]), "r=https%3A%2F%2Fx%2Fcb%3Fa%3D1%23f")
        XCTAssertEqual(encoded([("a b", ""), ("", "=")]), "a+b=&=%3D")
        XCTAssertEqual(encoded([("x", "*'()!\n\"\\")]), "x=%2A%27%28%29%21%0A%22%5C")
        XCTAssertEqual(encoded([("e", "😀")]), "e=%F0%9F%98%80")
        XCTAssertEqual(FormEncoding.component("a+b c"), "a%2Bb+c")
    }

    func testBasicAuthorization() {
        XCTAssertEqual(FormEncoding.basicAuthorization(clientId: "cli", clientSecret: "sec"), "Basic Y2xpOnNlYw==")
        // "my%3Aclient:s+e%2Bc": the colon in the id is encoded, so the first raw colon separates id and secret.
        XCTAssertEqual(FormEncoding.basicAuthorization(clientId: "my:client", clientSecret: "s e+c"),
                       "Basic bXklM0FjbGllbnQ6cytlJTJCYw==")
        XCTAssertEqual(FormEncoding.basicAuthorization(clientId: "cli", clientSecret: ""), "Basic Y2xpOg==")
    }
}

final class FormDecodingTests: XCTestCase {
    func testDecodesWhatEncodeProduces() {
        for text in ["a b+c&d=e", "é中😀", "%41", "", "~-._"] {
            XCTAssertEqual(FormEncoding.decodeComponent(FormEncoding.component(text)), text)
        }
        XCTAssertEqual(FormEncoding.decodeComponent("a%2Fb+c"), "a/b c")
        XCTAssertNil(FormEncoding.decodeComponent("%4"))
        XCTAssertNil(FormEncoding.decodeComponent("%zz"))
        XCTAssertNil(FormEncoding.decodeComponent("%ff"))
    }
}

final class FormBodyTests: XCTestCase {
    private func pairs(_ text: String) -> [String]? {
        FormEncoding.decode(Array(text.utf8))?.map { "\($0.name)=\($0.value)" }
    }

    func testPairsInOrder() {
        XCTAssertEqual(pairs("grant_type=password&username=a+b&password=p%2B%26%3D"), ["grant_type=password", "username=a b", "password=p+&="])
        XCTAssertEqual(pairs("a=1&&b=&c"), ["a=1", "b=", "c="], "empty parts are skipped; a name alone has an empty value")
        XCTAssertEqual(pairs("x=a=b"), ["x=a=b"], "only the first = separates")
        XCTAssertEqual(pairs(""), [])
        XCTAssertNil(pairs("a=%zz&b=1"), "one bad escape fails the whole body")
        XCTAssertNil(pairs("a=%C3"), "a truncated UTF-8 sequence fails")
    }

    func testUniqueParametersRefuseARepeatedName() {
        XCTAssertEqual(FormEncoding.uniqueParameters(Array("a=1&b=2".utf8)), ["a": "1", "b": "2"])
        XCTAssertNil(FormEncoding.uniqueParameters(Array("a=1&a=1".utf8)), "RFC 6749 §3.1")
        XCTAssertNil(FormEncoding.uniqueParameters(Array("a=%".utf8)))
    }

    func testQueryStringEncodesASpaceForURIParsersToo() {
        XCTAssertEqual(FormEncoding.queryString([("code", "a b"), ("state", "x/y+")]), "code=a%20b&state=x%2Fy%2B")
        XCTAssertEqual(FormEncoding.decode(Array(FormEncoding.queryString([("error_description", "no & yes")]).utf8))?.first?.value, "no & yes")
    }
}
