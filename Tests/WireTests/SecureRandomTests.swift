import XCTest
import Wire

final class SecureRandomTests: XCTestCase {
    func testTokensAreBase64URLOfTheRequestedLength() {
        let token = SecureRandom.token(bytes: 32)
        XCTAssertEqual(token.utf8.count, 43, "32 bytes are 43 base64url characters, no padding")
        XCTAssertEqual(Base64URL.decode(token)?.count, 32)
        XCTAssertEqual(SecureRandom.bytes(5).count, 5)
        XCTAssertEqual(SecureRandom.bytes(0), [])
    }

    func testTokensDiffer() {
        let tokens = Set((0..<100).map { _ in SecureRandom.token(bytes: 16) })
        XCTAssertEqual(tokens.count, 100)
    }
}
