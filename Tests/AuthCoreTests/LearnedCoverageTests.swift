@testable import AuthCore
import Foundation
import JSON
import Logging
import XCTest

/// Issue 29: what a learned provider covers — dot segments and encoded separators never carry a
/// token out of a covered path. Against fakes that record every request: no request leaves the process.
final class LearnedCoverageTests: XCTestCase {
    // MARK: Item 3: dot segments and encoded separators

    func testDotSegmentsAndEncodedSeparatorsNeverCarryATokenOutOfALearnedPath() async throws {
        let api = FakeAPI()
        let wire = Recording(api)
        let service = makeService(wire)
        _ = try await service.login(resource: FakeAPI.resource, context: LoginContext(prompt: LearningTests.playBrowser(api)))
        // The server gets the path with its dot segments removed: judged as it arrives.
        for url in ["https://api.example/mcp/../other", "https://api.example/mcp/../../tenant-b/inbox", "https://api.example/mcp/./../x",
                    "https://api.example/mcp/..", "https://api.example/mcp/..?q=/mcp", "https://api.example/mcp/..\\other"] {
            let signed = try await isSigned(service, url)
            XCTAssertFalse(signed, url)
        }
        for url in ["https://api.example/mcp/x/../y", "https://api.example/mcp/.", "https://api.example/x/../mcp/tools", "https://api.example/mcp/.well-known/x",
                    "https://api.example/mcp/a..b/%41", "https://api.example/mcp/...", "https://api.example/mcp?next=/../../other"] {
            let signed = try await isSigned(service, url)
            XCTAssertTrue(signed, url)
        }
        // Encoded dots, slashes and backslashes, in any case, under the covered path: a clear refusal.
        for url in ["https://api.example/mcp/%2e%2e/%2e%2e/tenant-b/inbox", "https://api.example/mcp/%2E%2E/other", "https://api.example/mcp/..%2Fother",
                    "https://api.example/mcp/..%2f..%2fother", "https://api.example/mcp/..%5Cother", "https://api.example/mcp/x/%2e"] {
            await assertRefused(url) { _ = try await service.sign(url: url, provider: nil) }
            await assertRefused(url) { _ = try await service.sign(url: url, provider: "api.example") }
        }
        // Naming the provider does not stretch its path either.
        await assertCode(.originNotAllowed) { _ = try await service.sign(url: "https://api.example/mcp/../other", provider: "api.example") }

        // fetch: the request that leaves the path goes out without the token; a refused one does not go out.
        let (escaping, encoded) = ("https://api.example/mcp/../../tenant-b/inbox", "https://api.example/mcp/%2e%2e/%2e%2e/tenant-b/inbox")
        let escaped = try await service.fetch(FetchRequest(method: "GET", url: escaping), provider: nil)
        XCTAssertFalse(escaped.signed)
        XCTAssertEqual(wire.sent.filter { $0.url == escaping }.map { $0.authorization != nil }, [false])
        await assertRefused("fetch") { _ = try await service.fetch(FetchRequest(method: "GET", url: encoded), provider: nil) }
        XCTAssertEqual(wire.sent.filter { $0.url == encoded }.count, 0, "the refused request was not sent")
    }

    /// The rule itself, without I/O: RFC 3986 §5.2.4's examples, the fast path's shapes, the prefixes.
    func testThePathRuleRemovesDotSegmentsAndFlagsEncodedSeparators() {
        func normalised(_ path: String) -> String {
            var path = path
            return path.withUTF8 { String(decoding: PathCoverage.removeDotSegments($0), as: UTF8.self) }
        }
        XCTAssertEqual(normalised("/a/b/c/./../../g"), "/a/g")
        XCTAssertEqual(normalised("/mid/content=5/../6"), "/mid/6")
        XCTAssertEqual(normalised("/a/b/.."), "/a/")
        XCTAssertEqual(normalised("/.."), "/")
        XCTAssertEqual(normalised("/../../x"), "/x")
        XCTAssertEqual(normalised("/a//b/./"), "/a//b/")
        XCTAssertEqual(normalised(""), "")
        func shape(_ path: String) -> PathCoverage.Shape {
            var path = path
            return path.withUTF8 { PathCoverage.shape(of: $0) }
        }
        for plain in ["/", "/mcp/x", "/.well-known/x", "/a..b", "/...", "/x.", "/%41%2", "/%2", ""] { XCTAssertEqual(shape(plain), .plain, plain) }
        for dotted in ["/.", "/..", "/a/./b", "/a/../b", "/a/.."] { XCTAssertEqual(shape(dotted), .dotSegments, dotted) }
        for encoded in ["/%2e", "/%2E%2e", "/a%2fb", "/a%2Fb", "/a%5cb", "/a%5Cb", "/a\\b", "/../%2e"] { XCTAssertEqual(shape(encoded), .encodesSeparators, encoded) }
        XCTAssertEqual(PathCoverage.prefix(of: "https://h/tenant-a/mcp/?q"), Array("/tenant-a/mcp".utf8))
        XCTAssertEqual(PathCoverage.prefix(of: "https://h"), [])
        XCTAssertEqual(PathCoverage.verdict("https://h/a/b/../../c", prefixes: [Array("/a".utf8), Array("/c".utf8)]), .covered)
        XCTAssertEqual(PathCoverage.verdict("https://h/b/%2e%2e/a", prefixes: [Array("/a".utf8)]), .outside, "refused only where it would be covered")
    }

    // MARK: Helpers

    private func makeService(_ transport: HTTPTransport, store: SessionStore = MemorySessionStore()) -> AuthService {
        AuthService(config: AgentConfig(), store: store, transport: transport, logger: Logger(level: .error, sink: { _ in }), events: { _ in })
    }

    /// Whether `sign` attaches a token to `url` (the signature itself is never printed).
    private func isSigned(_ service: AuthService, _ url: String) async throws -> Bool {
        if case .signed = try await service.sign(url: url, provider: nil) { return true }
        return false
    }

    private func assertRefused(_ label: String, file: StaticString = #filePath, line: UInt = #line, _ body: () async throws -> Void) async {
        await assertCode(.originNotAllowed, label, file: file, line: line, body)
    }

    private func assertCode(_ code: AuthErrorCode, step: LearningStep? = nil, _ label: String = "", file: StaticString = #filePath, line: UInt = #line,
                            _ body: () async throws -> Void) async {
        do {
            try await body()
            XCTFail("no error: \(label)", file: file, line: line)
        } catch let e as AuthError {
            XCTAssertEqual(e.code, code, "\(label): \(e.message)", file: file, line: line)
            if let step { XCTAssertEqual(e.step, step.rawValue, "\(label): \(e.message)", file: file, line: line) }
        } catch {
            XCTFail("\(label): \(error)", file: file, line: line)
        }
    }
}

/// A transport that records every request (its URL and `Authorization`) and answers with `answer`.
final class Recording: HTTPTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var log: [(url: String, authorization: String?)] = []
    private let answer: @Sendable (HTTPRequest) async throws -> HTTPResponse

    init(_ answer: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse) { self.answer = answer }

    convenience init(_ api: FakeAPI) {
        self.init { request in try await api.send(request) }
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let authorization = request.headers.first { $0.0.lowercased() == "authorization" }?.1
        lock.withLock { log.append((request.url, authorization)) }
        return try await answer(request)
    }

    var sent: [(url: String, authorization: String?)] { lock.withLock { log } }
    func reset() { lock.withLock { log = [] } }
}
