import Digest
import Foundation
import XCTest

/// FIPS 180-4 / NIST CSRC example vectors, hashlib cross-checks and the RFC 7636
/// PKCE example, each run through the one-shot `hash` and through `Hasher` fed
/// in awkward chunk sizes (so the buffering across block boundaries is tested too).
final class SHA256Tests: XCTestCase {
    func testNISTShortMessages() {
        check("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        check("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    func testNISTTwoBlockMessages() {
        check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        check("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
    }

    func testOneMillionA() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        let expected = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        XCTAssertEqual(hex(SHA256.hash(message)), expected)
        var hasher = SHA256.Hasher()
        for _ in 0..<1000 { hasher.update(message[0..<1000]) }
        XCTAssertEqual(hex(hasher.finalize()), expected)
    }

    func testLengthsZeroThroughOneHundredThirtyMatchHashlib() {
        XCTAssertEqual(ReferenceDigests.byLength.count, 131)
        for (length, expected) in ReferenceDigests.byLength.enumerated() {
            let message = ReferenceDigests.message(length: length)
            XCTAssertEqual(hex(SHA256.hash(message)), expected, "length \(length)")
            for chunk in [1, 3, 63, 64, 65] {
                XCTAssertEqual(hex(chunked(message, chunk)), expected, "length \(length), chunks of \(chunk)")
            }
        }
    }

    /// RFC 7636 Appendix B: S256 challenge = BASE64URL(SHA256(ASCII(verifier))).
    func testPKCEExample() {
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
        XCTAssertEqual(base64URL(SHA256.hash(verifier)), "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    func testCopiedHasherForksTheComputation() {
        var prefix = SHA256.Hasher()
        prefix.update(Array("ab".utf8))
        var fork = prefix
        fork.update(Array("c".utf8))
        prefix.update(Array("d".utf8))
        XCTAssertEqual(hex(fork.finalize()), hex(SHA256.hash("abc")))
        XCTAssertEqual(hex(prefix.finalize()), hex(SHA256.hash("abd")))
    }

    private func check(_ text: String, _ expected: String, file: StaticString = #filePath, line: UInt = #line) {
        let bytes = Array(text.utf8)
        XCTAssertEqual(hex(SHA256.hash(bytes)), expected, file: file, line: line)
        XCTAssertEqual(SHA256.hash(bytes).count, SHA256.digestByteCount, file: file, line: line)
        for chunk in [1, 7, 64] {
            XCTAssertEqual(hex(chunked(bytes, chunk)), expected, "chunks of \(chunk)", file: file, line: line)
        }
    }

    private func chunked(_ bytes: [UInt8], _ size: Int) -> [UInt8] {
        var hasher = SHA256.Hasher()
        var offset = 0
        while offset < bytes.count {
            hasher.update(bytes[offset..<min(offset + size, bytes.count)])
            offset += size
        }
        return hasher.finalize()
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    private func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
